// Policy: the version and source in force, and a simulator that shows how
// each rule judged a check (no side effects: no approval, no counters, no
// audit entry). A draft policy can stand in for the live one.
import { h, fill, api, tq, errorBox, fmtTime, badge, tags, jsonView } from '../lib.js';

export async function render(main) {
  const info = h('section', { class: 'panel', id: 'policy-info' }, h('h2', {}, 'Policy in force'), h('p', { class: 'muted' }, 'Loading…'));
  const result = h('div', { id: 'sim-result' });
  const field = (id, label, el) => h('div', { class: 'field' }, h('label', { for: id }, label), el);
  const tool = h('input', { id: 'sim-tool', required: true, placeholder: 'shell.exec' });
  const args = h('textarea', { id: 'sim-args', rows: 4, spellcheck: 'false', class: 'json-editor' });
  args.value = '{}';
  const agent = h('input', { id: 'sim-agent', placeholder: 'your key name' });
  const session = h('input', { id: 'sim-session', placeholder: 'optional' });
  const intent = h('input', { id: 'sim-intent', placeholder: 'optional' });
  const state = h('textarea', { id: 'sim-state', rows: 2, spellcheck: 'false', class: 'json-editor', placeholder: '{"calls": 12, "cost": 3.5, "tainted": true}' });
  const draft = h('textarea', { id: 'sim-policy', rows: 6, spellcheck: 'false', class: 'json-editor', placeholder: 'empty: the policy in force' });
  const form = h('form', { class: 'form', id: 'simulate' },
    h('div', { class: 'grid2' }, field('sim-tool', 'Tool', tool), field('sim-agent', 'Agent', agent)),
    field('sim-args', 'Arguments (JSON object)', args),
    h('div', { class: 'grid2' }, field('sim-session', 'Session', session), field('sim-intent', 'Intent', intent)),
    h('details', {}, h('summary', {}, 'Session state and a draft policy'),
      field('sim-state', 'Session state (JSON, optional)', state),
      field('sim-policy', 'Draft policy (YAML, optional)', draft)),
    h('div', { class: 'row' }, h('button', { type: 'submit', class: 'primary' }, 'Simulate')));
  fill(main, h('div', { class: 'page-head' }, h('h1', {}, 'Policy')), info,
    h('section', { class: 'panel' }, h('h2', {}, 'Simulate a check'), form, result));

  try {
    let note = null;
    let p;
    try {
      p = await api('GET', tq('/v1/policy'));
    } catch (e) {
      if (e.status !== 404) throw e;
      // The tenant has no tier of its own: the global policy decides.
      p = await api('GET', '/v1/policy?tier=global');
      note = h('p', { class: 'notice', id: 'policy-note' }, e.message);
    }
    fill(info, h('h2', {}, 'Policy in force'), note,
      h('dl', { class: 'facts' },
        h('dt', {}, 'Version'), h('dd', {}, h('code', { id: 'policy-version' }, p.version)),
        p.tier_version && p.tier_version !== p.version ? [h('dt', {}, 'This tier'), h('dd', {}, h('code', {}, p.tier_version))] : null,
        h('dt', {}, 'Tier'), h('dd', {}, p.tier || '', p.tenant ? ' ' + p.tenant : ''),
        h('dt', {}, 'Loaded'), h('dd', {}, fmtTime(p.loaded_at), p.origin ? h('span', { class: 'muted' }, ' from ' + p.origin) : null)),
      h('pre', { class: 'source', id: 'policy-source', tabindex: '0', role: 'region', 'aria-label': 'Policy source' }, p.source));
  } catch (e) {
    fill(info, h('h2', {}, 'Policy in force'), errorBox(e));
  }

  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    let check;
    try {
      check = { tool: tool.value.trim(), args: JSON.parse(args.value || '{}') };
      if (agent.value.trim()) check.agent = agent.value.trim();
      if (session.value.trim()) check.session = session.value.trim();
      if (intent.value.trim()) check.intent = intent.value.trim();
    } catch (x) {
      fill(result, errorBox('Arguments: not valid JSON: ' + x.message));
      return;
    }
    const body = { check };
    try {
      if (state.value.trim()) body.session = JSON.parse(state.value);
    } catch (x) {
      fill(result, errorBox('Session state: not valid JSON: ' + x.message));
      return;
    }
    if (draft.value.trim()) body.policy = draft.value;
    const t = new URLSearchParams(location.search).get('tenant');
    if (t) body.tenant = t;
    try {
      const r = await api('POST', '/v1/policy/simulate', body);
      fill(result, h('div', { class: 'sim' },
        h('p', { class: 'sim-decision' }, badge(r.decision), ' ', r.rule ? h('code', {}, r.rule) : h('span', { class: 'muted' }, 'no rule (default)'), ' ', r.reason),
        (r.risk || []).length ? h('p', {}, 'Risk: ', tags(r.risk)) : null,
        h('table', { class: 'list', id: 'trace' },
          h('thead', {}, h('tr', {}, ['Rule', 'Matched', 'Decision', 'Mode', 'Error'].map((x) => h('th', {}, x)))),
          h('tbody', {}, (r.trace || []).map((row) => h('tr', { class: row.matched ? 'matched' : '' },
            h('td', {}, h('code', {}, row.rule)), h('td', {}, row.matched ? badge('yes', 'ok') : 'no'),
            h('td', {}, row.decision ? badge(row.decision) : ''), h('td', {}, row.mode || ''), h('td', {}, row.error || ''))))),
        h('details', {}, h('summary', {}, 'facts and arguments'), jsonView({ facts: r.facts, args: r.args }))));
    } catch (x) {
      fill(result, errorBox(x));
    }
  });
}
