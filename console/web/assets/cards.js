// Approval and question cards: everything a careful approver needs to
// decide, and the controls to do it. The server applies the same rules as
// for any API client; the hints here only save a round trip.
import { h, fill, api, ago, left, badge, tags, link, jsonView, pretty, diffView, errorBox, toast, withTenant } from './lib.js';

/** counting is how many approving votes count (those since the last edit). */
export function counting(a) {
  const votes = a.votes || [];
  let start = 0;
  votes.forEach((v, i) => { if (v.vote === 'edit') start = i; });
  return votes.slice(start).filter((v) => v.vote === 'approve' || v.vote === 'edit').length;
}

function eligible(who, selectors) {
  return (selectors || []).some((s) => {
    const [kind, val] = s.split(':');
    return (kind === 'group' && (who.groups || []).includes(val)) || (kind === 'user' && who.name === val) || (kind === 'role' && who.roles.includes(val));
  });
}

function oneLine(v) {
  const s = JSON.stringify(v);
  return s.length > 90 ? s.slice(0, 90) + '…' : s;
}

/** recent renders a session's latest checks (except skip) into el. */
export async function recent(el, tenant, session, skip) {
  if (!session) {
    fill(el, h('p', { class: 'muted' }, 'No session given with this check.'));
    return;
  }
  try {
    const q = `/v1/sessions/${encodeURIComponent(session)}/checks?limit=6` + (tenant ? '&tenant=' + encodeURIComponent(tenant) : '');
    const list = (await api('GET', q)).filter((c) => c.id !== skip).slice(0, 5);
    fill(el, list.length ? h('ol', { class: 'recent' }, list.map((c) =>
      h('li', {}, badge(c.decision), ' ', h('code', {}, c.check.tool), ' ', h('span', { class: 'muted' }, oneLine(c.args ?? c.check.args)), ' ', ago(c.created_at))))
      : h('p', { class: 'muted' }, 'Nothing else in this session yet.'));
  } catch (err) {
    fill(el, errorBox(err));
  }
}

/**
 * approvalCard renders an approval. opts.onResolved(a) is called when a
 * vote leaves it no longer pending.
 */
export function approvalCard(a, { who, onResolved, detail = false }) {
  const card = h('article', { class: 'card approval', id: 'card-' + a.id, tabindex: '-1', dataset: { id: a.id, kind: 'approval' } });
  const body = h('div', { class: 'card-body' });
  const status = h('div', { class: 'status-line' });
  const actions = h('div', { class: 'actions' });
  const forms = h('div', { class: 'forms' });
  const msg = h('div', { class: 'card-msg' });
  const recentEl = h('div', { class: 'recent-box' }, h('p', { class: 'muted' }, 'Loading the session…'));
  let current = a;

  const t = a.tenant;
  card.append(
    h('header', { class: 'card-head' },
      h('h3', {}, h('code', { class: 'tool' }, a.tool), ' ', badge(a.status, 'status ' + a.status)),
      h('div', { class: 'meta' },
        h('span', {}, 'agent ', h('strong', { class: 'agent' }, a.agent)),
        h('span', {}, 'session ', a.session ? link('/sessions/' + encodeURIComponent(a.session), a.session, t) : h('span', { class: 'muted' }, 'none')),
        h('span', {}, 'asked ', ago(a.created_at)),
        detail ? null : link('/approvals/' + encodeURIComponent(a.id), 'open', t))),
    body, status, msg, actions, forms);

  fill(body,
    h('dl', { class: 'facts' },
      h('dt', {}, 'Rule'), h('dd', {}, h('code', {}, a.rule || '—'), ' ', h('span', { class: 'reason' }, a.reason)),
      h('dt', {}, 'Intent'), h('dd', { class: 'intent' }, a.intent ? a.intent : h('span', { class: 'muted' }, 'not given')),
      h('dt', {}, 'Risk'), h('dd', {}, (a.risk || []).length ? tags(a.risk) : h('span', { class: 'muted' }, 'none found')),
      h('dt', {}, 'Arguments'), h('dd', {}, jsonView(a.args)),
      h('dt', {}, 'Session'), h('dd', {}, recentEl)));
  recent(recentEl, t === who.tenant ? '' : t, a.session, a.check_id);

  function renderStatus() {
    const x = current;
    const n = counting(x);
    fill(status,
      h('span', { class: 'votes' }, `${n} of ${x.quorum} approval${x.quorum === 1 ? '' : 's'}`),
      x.status === 'pending' ? left(x.expires_at) : badge(x.status, 'status ' + x.status),
      h('span', { class: 'muted' }, 'approvers: ' + (x.approvers || []).join(', ')),
      (x.votes || []).length ? h('ul', { class: 'votes-list' }, x.votes.map((v) =>
        h('li', {}, h('strong', {}, v.by), ' ', v.vote, v.message ? [': “', v.message, '”'] : '', ' ', ago(v.at)))) : null);
    fill(actions);
    fill(forms);
    if (x.status !== 'pending') return;
    if (x.agent_key_id === who.key_id) {
      actions.append(h('p', { class: 'muted' }, 'You asked for this action with this key: you cannot vote on it.'));
      return;
    }
    if ((x.votes || []).some((v) => v.by_key === who.key_id)) {
      actions.append(h('p', { class: 'muted' }, 'You have voted on this approval.'));
      return;
    }
    if (!who.roles.includes('approver') && !who.roles.includes('admin')) {
      actions.append(h('p', { class: 'muted' }, 'Auditors can read approvals but not vote.'));
      return;
    }
    if (!eligible(who, x.approvers)) {
      actions.append(h('p', { class: 'notice' }, `You are not one of the approvers named (${(x.approvers || []).join(', ')}); rein will refuse your vote.`));
    }
    actions.append(
      h('button', { class: 'primary approve', onclick: () => approve(), title: 'Approve (a)' }, 'Approve'),
      h('button', { class: 'danger reject', onclick: () => openReject(), title: 'Reject with a message (r)' }, 'Reject…'),
      h('button', { class: 'edit', onclick: () => openEdit(), title: 'Edit the arguments, then approve (e)' }, 'Edit…'));
  }

  async function vote(body, label) {
    fill(msg);
    for (const b of card.querySelectorAll('button')) b.disabled = true;
    try {
      current = await api('POST', `/v1/approvals/${encodeURIComponent(a.id)}/votes`, body);
      toast(`${label}: ${a.tool} (${current.status})`);
      renderStatus();
      if (current.status !== 'pending' && onResolved) onResolved(current);
    } catch (err) {
      fill(msg, errorBox(err));
      for (const b of card.querySelectorAll('button')) b.disabled = false;
    }
  }

  function approve() {
    return vote({ vote: 'approve', message: '' }, 'Approved');
  }

  function openReject() {
    const text = h('textarea', { class: 'reject-message', rows: 2, placeholder: 'Why? The agent receives this message.', 'aria-label': 'Rejection message' });
    const send = () => vote({ vote: 'reject', message: text.value.trim() }, 'Rejected');
    text.addEventListener('keydown', (e) => {
      if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) send();
      if (e.key === 'Escape') fill(forms);
    });
    fill(forms, h('div', { class: 'form reject-form' }, text,
      h('div', { class: 'row' },
        h('button', { class: 'danger confirm-reject', onclick: send }, 'Reject'),
        h('button', { class: 'link', onclick: () => fill(forms) }, 'Cancel'),
        h('span', { class: 'muted' }, 'Ctrl+Enter sends, Esc cancels'))));
    text.focus();
  }

  function openEdit() {
    const orig = pretty(current.args);
    const text = h('textarea', { class: 'json-editor', rows: Math.min(20, orig.split('\n').length + 2), spellcheck: 'false', 'aria-label': 'Edited arguments (JSON)' });
    text.value = orig;
    const note = h('input', { class: 'edit-message', placeholder: 'Note for the agent (optional)', 'aria-label': 'Message' });
    const diff = h('div', { class: 'diff-box' });
    const send = h('button', { class: 'primary confirm-edit', disabled: true }, 'Approve edited arguments');
    let parsed = null;
    const update = () => {
      try {
        parsed = JSON.parse(text.value);
        if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('the arguments must be a JSON object');
      } catch (err) {
        parsed = null;
        fill(diff, h('p', { class: 'notice error' }, 'Not valid JSON: ' + err.message));
        send.disabled = true;
        return;
      }
      const now = pretty(parsed);
      fill(diff, h('p', { class: 'muted' }, now === orig ? 'No change yet: the diff against the proposal appears here.' : 'Diff against the proposal:'), diffView(orig, now));
      send.disabled = now === orig;
    };
    text.addEventListener('input', update);
    text.addEventListener('keydown', (e) => { if (e.key === 'Escape') fill(forms); });
    send.addEventListener('click', () => parsed && vote({ vote: 'edit', message: note.value.trim(), args: parsed }, 'Approved with edits'));
    fill(forms, h('div', { class: 'form edit-form' },
      h('p', { class: 'muted' }, 'Edited arguments are checked by policy again; rein refuses an edit that policy would deny.'),
      text, diff, note,
      h('div', { class: 'row' }, send, h('button', { class: 'link', onclick: () => fill(forms) }, 'Cancel'))));
    update();
    text.focus();
  }

  renderStatus();
  return {
    el: card,
    get approval() { return current; },
    update(x) { if (x.status !== current.status || (x.votes || []).length !== (current.votes || []).length) { current = x; renderStatus(); } },
    approve: () => card.querySelector('button.approve') && approve(),
    reject: () => card.querySelector('button.reject') && openReject(),
    edit: () => card.querySelector('button.edit') && openEdit(),
  };
}

/** questionCard renders a question with the control its shape calls for. */
export function questionCard(q, { who, onResolved, detail = false }) {
  const card = h('article', { class: 'card question', id: 'card-' + q.id, tabindex: '-1', dataset: { id: q.id, kind: 'question' } });
  const control = h('div', { class: 'answer' });
  const msg = h('div', { class: 'card-msg' });
  let current = q;
  card.append(
    h('header', { class: 'card-head' },
      h('h3', {}, h('span', { class: 'kind' }, 'Question'), ' ', badge(q.status, 'status ' + q.status)),
      h('div', { class: 'meta' },
        h('span', {}, 'agent ', h('strong', {}, q.agent)),
        h('span', {}, 'session ', q.session ? link('/sessions/' + encodeURIComponent(q.session), q.session, q.tenant) : h('span', { class: 'muted' }, 'none')),
        h('span', {}, 'asked ', ago(q.created_at)),
        q.status === 'pending' ? left(q.expires_at) : null,
        detail ? null : link('/questions/' + encodeURIComponent(q.id), 'open', q.tenant))),
    h('p', { class: 'question-text' }, q.text),
    (q.ask || []).length ? h('p', { class: 'muted' }, 'asked of: ' + q.ask.join(', ')) : null,
    msg, control);

  async function answer(value) {
    fill(msg);
    for (const b of card.querySelectorAll('button')) b.disabled = true;
    try {
      current = await api('POST', `/v1/questions/${encodeURIComponent(q.id)}/answer`, { answer: value });
      toast('Answered: ' + q.text.slice(0, 40));
      renderControl();
      if (current.status !== 'pending' && onResolved) onResolved(current);
    } catch (err) {
      fill(msg, errorBox(err));
      for (const b of card.querySelectorAll('button')) b.disabled = false;
    }
  }

  function renderControl() {
    const x = current;
    if (x.status !== 'pending') {
      fill(control, h('p', {}, 'Answer: ', x.answer !== undefined && x.answer !== null ? jsonView(x.answer) : '—', x.answered_by ? [' by ', h('strong', {}, x.answered_by)] : ''));
      return;
    }
    if (x.agent_key_id === who.key_id) {
      fill(control, h('p', { class: 'muted' }, 'You asked this question with this key: you cannot answer it.'));
      return;
    }
    if ((x.choices || []).length) {
      fill(control, h('div', { class: 'choices' }, x.choices.map((c) => h('button', { class: 'choice', onclick: () => answer(c) }, c))));
      return;
    }
    if (x.schema && x.schema.properties) {
      fill(control, schemaForm(x.schema, answer));
      return;
    }
    const text = h('textarea', { class: 'answer-text', rows: 2, 'aria-label': 'Answer' });
    fill(control, h('div', { class: 'form' }, text, h('button', { class: 'primary', onclick: () => text.value.trim() && answer(text.value.trim()) }, 'Send answer')));
  }

  renderControl();
  return {
    el: card,
    get question() { return current; },
    update(x) { if (x.status !== current.status) { current = x; renderControl(); } },
    approve() {}, reject() {}, edit() {},
  };
}

/** schemaForm generates a form for a flat object JSON Schema. */
function schemaForm(schema, submit) {
  const required = new Set(schema.required || []);
  const fields = Object.entries(schema.properties).map(([name, p]) => {
    const id = 'f-' + name.replace(/[^A-Za-z0-9_-]/g, '_') + '-' + Math.random().toString(36).slice(2, 7);
    let input;
    if (Array.isArray(p.enum)) {
      input = h('select', { id, name }, required.has(name) ? null : h('option', { value: '' }, '—'), p.enum.map((v) => h('option', { value: JSON.stringify(v) }, String(v))));
    } else if (p.type === 'boolean') {
      input = h('input', { id, name, type: 'checkbox' });
    } else if (p.type === 'number' || p.type === 'integer') {
      input = h('input', { id, name, type: 'number', step: p.type === 'integer' ? '1' : 'any', required: required.has(name) });
    } else {
      input = h('input', { id, name, type: 'text', required: required.has(name) });
    }
    return { name, p, input, el: h('div', { class: 'field' }, h('label', { for: id }, p.title || name, required.has(name) ? ' *' : ''), input, p.description ? h('small', { class: 'muted' }, p.description) : null) };
  });
  const form = h('form', { class: 'form schema-form' }, fields.map((f) => f.el), h('button', { type: 'submit', class: 'primary' }, 'Send answer'));
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const out = {};
    for (const f of fields) {
      const { input, p, name } = f;
      if (Array.isArray(p.enum)) { if (input.value !== '') out[name] = JSON.parse(input.value); }
      else if (p.type === 'boolean') out[name] = input.checked;
      else if (p.type === 'number' || p.type === 'integer') { if (input.value !== '') out[name] = Number(input.value); }
      else if (input.value !== '' || required.has(name)) out[name] = input.value;
    }
    submit(out);
  });
  return form;
}

export { withTenant };
