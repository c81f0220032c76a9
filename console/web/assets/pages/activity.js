// Activity: recent decisions with filters (decision, agent, tool, session,
// time), newest first, more on demand; new decisions appear live when no
// time bound is set.
import { h, fill, api, ago, badge, tags, link, jsonView, errorBox, live, debounce, fmtTime, isAllTenants } from '../lib.js';

const FIELDS = ['decision', 'agent', 'tool', 'session', 'since', 'until', 'tenant'];

export async function render(main) {
  const q = new URLSearchParams(location.search);
  const input = (name, attrs = {}) => h('input', { id: 'f-' + name, name, value: q.get(name) || '', ...attrs });
  const local = (iso) => (iso ? new Date(iso).toISOString().slice(0, 16) : '');
  const form = h('form', { class: 'filters', id: 'filters' },
    h('div', { class: 'field' }, h('label', { for: 'f-decision' }, 'Decision'),
      h('select', { id: 'f-decision', name: 'decision' }, ['', 'allow', 'deny', 'ask', 'throttle', 'modify'].map((d) =>
        h('option', { value: d, selected: q.get('decision') === d }, d || 'any')))),
    h('div', { class: 'field' }, h('label', { for: 'f-agent' }, 'Agent'), input('agent', { placeholder: 'builder' })),
    h('div', { class: 'field' }, h('label', { for: 'f-tool' }, 'Tool'), input('tool', { placeholder: 'shell.exec' })),
    h('div', { class: 'field' }, h('label', { for: 'f-session' }, 'Session'), input('session')),
    h('div', { class: 'field' }, h('label', { for: 'f-since' }, 'Since (UTC)'), h('input', { id: 'f-since', name: 'since', type: 'datetime-local', value: local(q.get('since')) })),
    h('div', { class: 'field' }, h('label', { for: 'f-until' }, 'Until (UTC)'), h('input', { id: 'f-until', name: 'until', type: 'datetime-local', value: local(q.get('until')) })),
    isAllTenants() ? h('div', { class: 'field' }, h('label', { for: 'f-tenant' }, 'Tenant'), input('tenant', { placeholder: 'all' })) : null,
    h('button', { type: 'submit', class: 'primary' }, 'Filter'),
    h('a', { href: '/activity' }, 'clear'));
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const out = new URLSearchParams();
    for (const f of FIELDS) {
      const el = form.elements.namedItem(f);
      if (!el || !el.value) continue;
      out.set(f, f === 'since' || f === 'until' ? new Date(el.value + 'Z').toISOString() : el.value.trim());
    }
    location.assign('/activity' + (out.toString() ? '?' + out : ''));
  });
  const state = h('span', { class: 'live-state' });
  const tbody = h('tbody', { id: 'checks' });
  const more = h('button', { hidden: true, id: 'more' }, 'Load more');
  const err = h('div');
  fill(main, h('div', { class: 'page-head' }, h('h1', {}, 'Activity'), state), form, err,
    h('table', { class: 'list' }, h('thead', {}, h('tr', {}, ['Time', 'Decision', 'Agent', 'Tool', 'Session', 'Rule and reason'].map((t) => h('th', {}, t)))), tbody),
    h('p', {}, more));

  const params = new URLSearchParams();
  for (const f of FIELDS) if (q.get(f)) params.set(f, q.get(f));
  params.set('limit', '50');
  let cursor = '';
  const seen = new Set();

  function row(c) {
    const detail = h('tr', { class: 'detail', hidden: true }, h('td', { colspan: 6 },
      h('dl', { class: 'facts' },
        h('dt', {}, 'Check'), h('dd', {}, h('code', {}, c.id), ' · audit #', String(c.audit_index), ' · ', fmtTime(c.created_at)),
        c.check.intent ? [h('dt', {}, 'Intent'), h('dd', {}, c.check.intent)] : null,
        h('dt', {}, 'Risk'), h('dd', {}, (c.risk || []).length ? tags(c.risk) : h('span', { class: 'muted' }, 'none')),
        h('dt', {}, 'Arguments'), h('dd', {}, jsonView(c.args ?? c.check.args)),
        c.approval ? [h('dt', {}, 'Approval'), h('dd', {}, link('/approvals/' + encodeURIComponent(c.approval.id), c.approval.id, c.tenant), ' ', badge(c.approval.status))] : null,
        c.result ? [h('dt', {}, 'Result'), h('dd', {}, badge(c.result.status), ' ', c.result.summary || '')] : null,
        h('dt', {}, 'Policy'), h('dd', {}, h('code', {}, c.policy_version)))));
    const tr = h('tr', { class: 'clickable', dataset: { id: c.id }, onclick: () => { detail.hidden = !detail.hidden; } },
      h('td', {}, ago(c.created_at)),
      h('td', {}, badge(c.decision)),
      h('td', {}, c.check.agent, isAllTenants() ? h('span', { class: 'muted' }, ' @ ' + c.tenant) : null),
      h('td', {}, h('code', {}, c.check.tool)),
      h('td', {}, c.check.session ? link('/sessions/' + encodeURIComponent(c.check.session), c.check.session, c.tenant) : h('span', { class: 'muted' }, '—')),
      h('td', {}, c.rule ? [h('code', {}, c.rule), ' '] : null, c.reason));
    return [tr, detail];
  }

  async function page(first) {
    const p = new URLSearchParams(params);
    if (!first && cursor) p.set('cursor', cursor);
    try {
      const r = await api('GET', '/v1/checks?' + p, undefined, { raw: true });
      const list = await r.json();
      if (!first) cursor = r.headers.get('X-Next-Cursor') || '';
      const rows = [];
      for (const c of list) {
        if (seen.has(c.id)) continue;
        seen.add(c.id);
        rows.push(...row(c));
      }
      if (rows.length) tbody.querySelector('tr.none')?.remove();
      if (first) tbody.prepend(...rows); else tbody.append(...rows);
      if (!first) more.hidden = !cursor;
      if (!tbody.children.length) fill(tbody, h('tr', { class: 'none' }, h('td', { colspan: 6, class: 'muted' }, 'No decisions match.')));
      fill(err);
    } catch (e) {
      fill(err, errorBox(e));
    }
  }
  more.addEventListener('click', () => page(false));
  await page(false);
  if (!q.get('until')) {
    const refresh = debounce(() => page(true), 200);
    live(['decision'], () => refresh(), (s) => { state.textContent = s === 'live' ? '● live' : '○ reconnecting…'; state.className = 'live-state ' + s; });
  }
}
