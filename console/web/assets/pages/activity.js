// Activity: recent decisions with filters (decision, agent, tool, session,
// time), newest first, more on demand; new decisions appear live when no
// time bound is set.
import { h, ruleAndReason, fill, api, ago, badge, tags, link, jsonView, errorBox, live, debounce, fmtTime, isAllTenants } from '../lib.js';

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
  const exportMsg = h('span', { class: 'muted', id: 'export-msg', role: 'status' });
  const exports = h('div', { class: 'row exports' },
    h('button', { type: 'button', id: 'export-jsonl', onclick: () => exportAll('jsonl') }, 'Export JSONL'),
    h('button', { type: 'button', id: 'export-csv', onclick: () => exportAll('csv') }, 'Export CSV'),
    exportMsg);
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
  fill(main, h('div', { class: 'page-head' }, h('h1', {}, 'Activity'), state), form, exports, err,
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
    const toggle = () => { detail.hidden = !detail.hidden; };
    const tr = h('tr', { class: 'clickable', dataset: { id: c.id }, tabindex: '0', title: 'Show the details (Enter)', onclick: (e) => { if (!e.target.closest('a')) toggle(); },
      onkeydown: (e) => { if ((e.key === 'Enter' || e.key === ' ') && e.target === tr) { e.preventDefault(); toggle(); } } },
      h('td', {}, ago(c.created_at)),
      h('td', {}, badge(c.decision)),
      h('td', {}, c.check.agent, isAllTenants() ? h('span', { class: 'muted' }, ' @ ' + c.tenant) : null),
      h('td', {}, h('code', {}, c.check.tool)),
      h('td', {}, c.check.session ? link('/sessions/' + encodeURIComponent(c.check.session), c.check.session, c.tenant) : h('span', { class: 'muted' }, '—')),
      h('td', {}, ruleAndReason(c.rule, c.reason)));
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
  // Export: every decision the filters select (following the cursor), as
  // JSON lines (the API's records as they are) or CSV, made in the page.
  async function exportAll(format) {
    const out = [];
    let next = '';
    fill(exportMsg, 'Exporting…');
    try {
      for (let n = 0; n < 200; n++) {
        const p = new URLSearchParams(params);
        p.set('limit', '500');
        if (next) p.set('cursor', next);
        const r = await api('GET', '/v1/checks?' + p, undefined, { raw: true });
        out.push(...(await r.json()));
        next = r.headers.get('X-Next-Cursor') || '';
        if (!next) break;
      }
    } catch (e) {
      fill(exportMsg, errorBox(e));
      return;
    }
    const text = format === 'csv' ? toCSV(out) : out.map((c) => JSON.stringify(c)).join('\n') + (out.length ? '\n' : '');
    const blob = new Blob([text], { type: format === 'csv' ? 'text/csv' : 'application/jsonl' });
    const a = h('a', { href: URL.createObjectURL(blob), download: `rein-activity-${new Date().toISOString().replace(/[:.]/g, '-')}.${format}` });
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(a.href), 10000);
    fill(exportMsg, `${out.length} decision${out.length === 1 ? '' : 's'} exported as ${format.toUpperCase()}${next ? ' (stopped at 100,000; narrow the filters for the rest)' : ''}.`);
  }

  more.addEventListener('click', () => page(false));
  await page(false);
  if (!q.get('until')) {
    const refresh = debounce(() => page(true), 200);
    live(['decision'], () => refresh(), (s) => { state.textContent = s === 'live' ? '● live' : '○ reconnecting…'; state.className = 'live-state ' + s; });
  }
}

const CSV_COLUMNS = [
  ['time', (c) => c.created_at], ['id', (c) => c.id], ['tenant', (c) => c.tenant], ['decision', (c) => c.decision],
  ['agent', (c) => c.check.agent], ['tool', (c) => c.check.tool], ['session', (c) => c.check.session],
  ['rule', (c) => c.rule], ['reason', (c) => c.reason], ['risk', (c) => (c.risk || []).join(' ')],
  ['args', (c) => JSON.stringify(c.args ?? c.check.args ?? null)], ['intent', (c) => c.check.intent],
  ['approval', (c) => c.approval?.id], ['approval_status', (c) => c.approval?.status],
  ['result', (c) => c.result?.status], ['audit_index', (c) => c.audit_index], ['policy_version', (c) => c.policy_version],
];

/**
 * toCSV writes RFC 4180 CSV. A cell that a spreadsheet would run as a
 * formula (starting with =, +, -, @, tab or carriage return) gets a leading
 * apostrophe, so opening an export never runs what an agent wrote.
 */
export function toCSV(list) {
  const cell = (v) => {
    let s = v == null ? '' : String(v);
    if (/^[=+\-@\t\r]/.test(s)) s = "'" + s;
    return '"' + s.replace(/"/g, '""') + '"';
  };
  return [CSV_COLUMNS.map(([n]) => n).join(','), ...list.map((c) => CSV_COLUMNS.map(([, f]) => cell(f(c))).join(','))].join('\r\n') + '\r\n';
}
