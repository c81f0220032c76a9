// Session: one session's counters and the timeline of its checks, with the
// approvals behind them (votes) and the results agents reported. Admins can
// stop the session (a lock) and let it run again.
import { h, ruleAndReason, fill, api, tq, pageTenant, ago, badge, tags, link, jsonView, errorBox, toast, fmtTime, live, debounce, serial, hasRole } from '../lib.js';

export async function render(main, { who, arg }) {
  const id = arg;
  const stats = h('div', { class: 'stats', id: 'session-stats' });
  const lockBox = h('div', { id: 'session-lock' });
  const timeline = h('ol', { class: 'timeline', id: 'timeline' });
  const err = h('div');
  const state = h('span', { class: 'live-state' });
  fill(main, h('div', { class: 'page-head' }, h('h1', {}, 'Session ', h('code', {}, id)), state), err, stats, lockBox, timeline);
  const tenant = pageTenant();

  async function load() {
    try {
      const [s, checks, approvals] = await Promise.all([
        api('GET', tq(`/v1/sessions/${encodeURIComponent(id)}`)).catch((e) => (e.status === 404 ? null : Promise.reject(e))),
        api('GET', tq(`/v1/sessions/${encodeURIComponent(id)}/checks?limit=200`)),
        api('GET', tq(`/v1/approvals?session=${encodeURIComponent(id)}&limit=200`)),
      ]);
      fill(err);
      renderStats(s, checks);
      const byCheck = new Map(approvals.map((a) => [a.check_id, a]));
      const byID = new Map(approvals.map((a) => [a.id, a]));
      fill(timeline, checks.length ? checks.map((c) => item(c, byCheck.get(c.id) || (c.approval && byID.get(c.approval.id)))) : h('li', {}, 'No checks in this session.'));
      if (hasRole(who, 'admin')) await renderLock();
    } catch (e) {
      fill(err, errorBox(e));
    }
  }

  function renderStats(s, checks) {
    const stat = (v, label) => h('div', { class: 'stat' }, h('b', {}, String(v)), h('span', {}, label));
    if (!s) {
      fill(stats, stat(checks.length, 'checks'));
      return;
    }
    fill(stats, stat(s.checks ?? checks.length, 'checks'), stat(s.calls, 'allowed'), stat(s.denials ?? 0, 'denied'),
      stat(Number(s.cost || 0).toFixed(4).replace(/\.?0+$/, ''), 'cost'), stat(s.tainted ? 'yes' : 'no', 'tainted'),
      h('div', { class: 'stat' }, h('b', {}, s.agent || '—'), h('span', {}, 'agent')),
      h('div', { class: 'stat' }, h('b', {}, ago(s.started_at)), h('span', {}, 'started')),
      h('div', { class: 'stat' }, h('b', {}, ago(s.last_at)), h('span', {}, 'last check')));
  }

  function item(c, a) {
    return h('li', { class: c.decision, dataset: { id: c.id } },
      h('div', { class: 'tl-head' }, badge(c.decision), h('code', {}, c.check.tool), h('span', { class: 'muted' }, c.check.agent), ago(c.created_at),
        h('span', { class: 'muted' }, '#' + c.audit_index)),
      h('div', { class: 'tl-sub' }, ruleAndReason(c.rule, c.reason)),
      c.check.intent ? h('div', { class: 'tl-sub intent' }, c.check.intent) : null,
      (c.risk || []).length ? h('div', { class: 'tl-sub' }, tags(c.risk)) : null,
      h('details', { class: 'tl-sub' }, h('summary', {}, 'arguments'), jsonView(c.args ?? c.check.args)),
      a ? h('div', { class: 'tl-sub' }, 'approval ', link('/approvals/' + encodeURIComponent(a.id), a.id, a.tenant), ' ', badge(a.status),
        (a.votes || []).length ? h('ul', { class: 'votes-list' }, a.votes.map((v) => h('li', {}, h('strong', {}, v.by), ' ', v.vote, v.message ? [': “', v.message, '”'] : '', ' ', ago(v.at)))) : null)
        : c.approval ? h('div', { class: 'tl-sub' }, 'approval ', link('/approvals/' + encodeURIComponent(c.approval.id), c.approval.id, c.tenant), ' ', badge(c.approval.status)) : null,
      c.result ? h('div', { class: 'tl-sub' }, 'result ', badge(c.result.status), ' ', c.result.summary || '', c.result.cost != null ? ` (cost ${c.result.cost})` : '') : null);
  }

  async function renderLock() {
    const locks = (await api('GET', '/v1/locks')).filter((l) => l.target && l.target.session === id && !l.target.agent && !l.target.tool &&
      (!tenant || l.tenant === tenant) && !l.removed_at);
    if (locks.length) {
      fill(lockBox, h('div', { class: 'notice error' }, h('strong', {}, 'Stopped: '), locks[0].reason, ' — by ', locks[0].created_by, ' ', ago(locks[0].created_at), ' ',
        h('button', { id: 'resume', onclick: async () => {
          try {
            for (const l of locks) await api('DELETE', '/v1/locks/' + encodeURIComponent(l.id));
            toast('Session resumed');
            refresh();
          } catch (e) { fill(err, errorBox(e)); }
        } }, 'Resume')));
      return;
    }
    const reason = h('input', { id: 'stop-reason', placeholder: 'Why? (shown to the agent)', 'aria-label': 'Reason to stop' });
    fill(lockBox, h('div', { class: 'row' },
      h('button', { class: 'danger', id: 'stop', onclick: async () => {
        try {
          const body = { target: { session: id }, reason: reason.value.trim() || `stopped from the console by ${who.name}` };
          if (tenant) body.tenant = tenant;
          await api('POST', '/v1/locks', body);
          toast('Session stopped: every check in it is denied');
          refresh();
        } catch (e) { fill(err, errorBox(e)); }
      } }, 'Stop this session'), reason));
  }

  // One load at a time (see serial), and a load each time the stream
  // opens for what happened before it.
  const refresh = serial(load);
  await refresh();
  const reload = debounce(refresh, 250);
  live(['decision', 'approval.updated', 'lock.updated'], (t, d) => { if (t === 'lock.updated' || t === 'opened' || !d || !d.session || d.session === id) reload(); },
    (s) => { state.textContent = s === 'live' ? '● live' : '○ reconnecting…'; state.className = 'live-state ' + s; });
}

export { fmtTime };
