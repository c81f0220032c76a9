// One review after the fact: what was allowed (the action whole, its risk,
// the rule, why it was queued, the result the agent reported), the
// session's timeline, and the verdict: ok, or a concern that can lock the
// agent or the session at once and propose a tighter policy.
import { h, fill, api, tq, badge, tags, link, ago, fmtTime, jsonView, errorBox, toast, live, debounce, serial, hasRole } from '../lib.js';

export async function render(main, { who, arg }) {
  const box = h('div', { id: 'review' });
  const verdict = h('div', { id: 'verdict' });
  const err = h('div');
  const timeline = h('div', { id: 'review-session' });
  fill(main, h('div', { class: 'page-head' }, h('h1', {}, 'Review'), h('code', { class: 'muted' }, arg)), err, box, verdict, timeline);

  async function load() {
    try {
      const rv = await api('GET', tq(`/v1/reviews/${encodeURIComponent(arg)}`));
      fill(err);
      show(rv);
      // A reload (the stream opening, another review's event) keeps the
      // form and what was typed in it while the review stays open.
      if (rv.status === 'open' && hasRole(who, 'approver', 'admin')) {
        if (!verdict.querySelector('#review-concern')) form(rv);
      } else fill(verdict);
      if (rv.session) await sessionChecks(rv);
    } catch (e) {
      fill(err, errorBox(e));
    }
  }

  function show(rv) {
    const res = rv.result;
    fill(box,
      h('dl', { class: 'facts' },
        h('dt', {}, 'Status'), h('dd', {}, badge(rv.status), rv.decided_by ? [' by ', h('strong', {}, rv.decided_by), ' ', ago(rv.decided_at)] : null),
        h('dt', {}, 'What'), h('dd', {}, rv.kind === 'session' ? ['the whole session ', h('code', {}, rv.session)] : [h('code', {}, rv.tool), rv.check_id ? [' (check ', h('code', {}, rv.check_id), ')'] : null]),
        h('dt', {}, 'Agent'), h('dd', {}, rv.agent),
        rv.session ? [h('dt', {}, 'Session'), h('dd', {}, link('/sessions/' + encodeURIComponent(rv.session), rv.session, rv.tenant))] : null,
        rv.rule ? [h('dt', {}, 'Allowed by'), h('dd', {}, h('code', {}, rv.rule))] : null,
        h('dt', {}, 'Why review'), h('dd', {}, (rv.why || []).join('; ')),
        (rv.risk || []).length ? [h('dt', {}, 'Risk'), h('dd', {}, tags(rv.risk))] : null,
        h('dt', {}, 'Reviewers'), h('dd', {}, (rv.reviewers || []).join(', ') || 'approvers and admins'),
        h('dt', {}, 'Queued'), h('dd', {}, fmtTime(rv.created_at)),
        rv.message ? [h('dt', {}, 'Verdict'), h('dd', {}, rv.message)] : null,
        rv.lock_id ? [h('dt', {}, 'Lock'), h('dd', {}, h('code', {}, rv.lock_id))] : null,
        rv.proposal ? [h('dt', {}, 'Proposal'), h('dd', {}, h('pre', {}, rv.proposal))] : null),
      rv.args ? [h('h2', {}, 'Arguments'), jsonView(rv.args)] : null,
      res ? [h('h2', {}, 'Result the agent reported'), h('p', {}, badge(res.status), ' ', res.summary || ''),
        res.args_match === false ? h('p', { class: 'notice error', id: 'args-differ' }, 'What ran differs from what was allowed: the arguments the agent reported (', h('code', {}, res.args_hash || ''), ') are not the allowed ones.') : null,
        res.args_match === true ? h('p', { class: 'muted' }, 'The agent reported running exactly the allowed arguments.') : null] : null);
  }

  function form(rv) {
    const message = h('textarea', { id: 'review-message', rows: 3, 'aria-label': 'What you found (required for a concern)' });
    // Locking is for admins (rein refuses it to others); an approver marks
    // the concern and an admin locks.
    const admin = hasRole(who, 'admin');
    const lock = h('select', { id: 'review-lock', 'aria-label': 'Lock with the concern' },
      h('option', { value: '' }, 'no lock'), h('option', { value: 'agent' }, `lock agent ${rv.agent}`),
      rv.session ? h('option', { value: 'session' }, `lock session ${rv.session}`) : null);
    const proposal = h('textarea', { id: 'review-proposal', rows: 2, 'aria-label': 'Tighter policy to propose (optional)' });
    const msg = h('div', { class: 'card-msg', role: 'status' });
    async function decide(kind) {
      const body = { verdict: kind, message: message.value.trim() };
      if (kind === 'concern') {
        if (!body.message) {
          fill(msg, h('p', { class: 'notice error' }, 'Say what is wrong: a concern needs a message.'));
          message.focus();
          return;
        }
        if (lock.value) body.lock = lock.value;
        if (proposal.value.trim()) body.proposal = proposal.value.trim();
      }
      for (const b of verdict.querySelectorAll('button')) b.disabled = true;
      try {
        await api('POST', tq(`/v1/reviews/${encodeURIComponent(rv.id)}/verdict`), body);
        toast(kind === 'ok' ? 'Marked ok' : 'Concern recorded' + (body.lock ? `; ${body.lock} locked` : ''));
        refresh();
      } catch (e) {
        fill(msg, errorBox(e));
        for (const b of verdict.querySelectorAll('button')) b.disabled = false;
      }
    }
    fill(verdict, h('h2', {}, 'Your verdict'),
      h('label', { for: 'review-message' }, 'What you found'), message,
      admin ? [h('label', { for: 'review-lock' }, 'With a concern, stop it now'), lock] : null,
      h('label', { for: 'review-proposal' }, 'With a concern, propose a tighter policy'), proposal,
      h('div', { class: 'actions' },
        h('button', { class: 'approve', id: 'review-ok', onclick: () => decide('ok') }, 'Looks fine'),
        h('button', { class: 'reject', id: 'review-concern', onclick: () => decide('concern') }, 'Concern')),
      msg);
  }

  async function sessionChecks(rv) {
    const checks = await api('GET', tq(`/v1/sessions/${encodeURIComponent(rv.session)}/checks?limit=200`));
    fill(timeline, h('h2', {}, 'The session'), h('ol', { class: 'timeline' }, checks.map((c) =>
      h('li', { class: c.decision + (c.id === rv.check_id ? ' reviewed' : ''), dataset: { id: c.id } },
        h('div', { class: 'tl-head' }, badge(c.decision), h('code', {}, c.check.tool), ago(c.created_at), c.id === rv.check_id ? h('strong', {}, ' ← reviewed') : null),
        (c.risk || []).length ? h('div', { class: 'tl-sub' }, tags(c.risk)) : null,
        h('details', { class: 'tl-sub' }, h('summary', {}, 'arguments'), jsonView(c.args ?? c.check.args))))));
  }

  const refresh = serial(load);
  await refresh();
  const reload = debounce(refresh, 250);
  live(['review.decided'], (t, d) => { if (t === 'opened' || !d || d.id === arg) reload(); });
}
