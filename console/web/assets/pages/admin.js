// Admin: API keys (create, revoke) and locks (stop, resume).
import { h, fill, api, errorBox, toast, ago, fmtTime } from '../lib.js';

export async function render(main, { who }) {
  const keysBox = h('div', { id: 'keys' });
  const locksBox = h('div', { id: 'locks' });
  const created = h('div', { id: 'created-key' });
  const err = h('div');

  // Create a key.
  const kName = h('input', { id: 'k-name', required: true, placeholder: 'alice' });
  const kTenant = h('input', { id: 'k-tenant', placeholder: who.tenant === '*' ? 'acme (or * for every tenant)' : who.tenant, value: who.tenant === '*' ? '' : who.tenant, disabled: who.tenant !== '*' });
  const roles = ['approver', 'agent', 'auditor', 'admin'].map((r) => ({ r, el: h('input', { type: 'checkbox', id: 'k-role-' + r, value: r, checked: r === 'approver' }) }));
  const kGroups = h('input', { id: 'k-groups', placeholder: 'oncall, finance' });
  const keyForm = h('form', { class: 'form', id: 'key-form' },
    h('div', { class: 'grid2' },
      h('div', { class: 'field' }, h('label', { for: 'k-name' }, 'Name'), kName),
      h('div', { class: 'field' }, h('label', { for: 'k-tenant' }, 'Tenant'), kTenant)),
    h('div', { class: 'row' }, 'Roles: ', roles.map(({ r, el }) => h('label', { for: el.id, class: 'inline-label' }, el, ' ', r))),
    h('div', { class: 'field' }, h('label', { for: 'k-groups' }, 'Approver groups (comma-separated)'), kGroups),
    h('div', { class: 'row' }, h('button', { type: 'submit', class: 'primary' }, 'Create key')), created);
  keyForm.addEventListener('submit', async (e) => {
    e.preventDefault();
    try {
      const body = { name: kName.value.trim(), roles: roles.filter((x) => x.el.checked).map((x) => x.r),
        groups: kGroups.value.split(',').map((g) => g.trim()).filter(Boolean) };
      if (kTenant.value.trim()) body.tenant = kTenant.value.trim();
      const k = await api('POST', '/v1/keys', body);
      fill(created, h('div', { class: 'notice ok' }, h('p', {}, `Key ${k.name} created. Copy the secret now: it is shown only once.`), h('div', { class: 'secret', id: 'new-secret' }, k.key)));
      kName.value = '';
      loadKeys();
    } catch (x) {
      fill(created, errorBox(x));
    }
  });

  // Create a lock.
  const lAgent = h('input', { id: 'l-agent', placeholder: 'builder' });
  const lSession = h('input', { id: 'l-session', placeholder: 'run-42' });
  const lTool = h('input', { id: 'l-tool', placeholder: 'payments.*' });
  const lReason = h('input', { id: 'l-reason', required: true, placeholder: 'incident 42' });
  const lExpires = h('input', { id: 'l-expires', type: 'datetime-local' });
  const lTenant = who.tenant === '*' ? h('input', { id: 'l-tenant', placeholder: 'acme, or * for every tenant' }) : null;
  const lockForm = h('form', { class: 'form', id: 'lock-form' },
    h('p', { class: 'muted' }, 'A lock denies every matching check before policy runs, and invalidates matching pending approvals. Leave agent, session and tool empty to stop the whole tenant.'),
    h('div', { class: 'grid2' },
      h('div', { class: 'field' }, h('label', { for: 'l-agent' }, 'Agent (and its sub-agents)'), lAgent),
      h('div', { class: 'field' }, h('label', { for: 'l-session' }, 'Session'), lSession),
      h('div', { class: 'field' }, h('label', { for: 'l-tool' }, 'Tool (glob)'), lTool),
      h('div', { class: 'field' }, h('label', { for: 'l-expires' }, 'Until (UTC, optional)'), lExpires),
      lTenant ? h('div', { class: 'field' }, h('label', { for: 'l-tenant' }, 'Tenant'), lTenant) : null),
    h('div', { class: 'field' }, h('label', { for: 'l-reason' }, 'Reason (agents see it)'), lReason),
    h('div', { class: 'row' }, h('button', { type: 'submit', class: 'danger' }, 'Lock')));
  lockForm.addEventListener('submit', async (e) => {
    e.preventDefault();
    const target = {};
    if (lAgent.value.trim()) target.agent = lAgent.value.trim();
    if (lSession.value.trim()) target.session = lSession.value.trim();
    if (lTool.value.trim()) target.tool = lTool.value.trim();
    if (!Object.keys(target).length && !confirm('Lock the whole tenant? Every check will be denied.')) return;
    const body = { target, reason: lReason.value.trim() };
    if (lExpires.value) body.expires_at = new Date(lExpires.value + 'Z').toISOString();
    if (lTenant && lTenant.value.trim()) body.tenant = lTenant.value.trim();
    try {
      await api('POST', '/v1/locks', body);
      toast('Locked');
      lockForm.reset();
      loadLocks();
    } catch (x) {
      fill(err, errorBox(x));
    }
  });

  fill(main, h('div', { class: 'page-head' }, h('h1', {}, 'Admin')), err,
    h('section', { class: 'panel' }, h('h2', {}, 'Locks'), locksBox, h('details', {}, h('summary', {}, 'New lock'), lockForm)),
    h('section', { class: 'panel' }, h('h2', {}, 'Keys'), keysBox, h('details', {}, h('summary', {}, 'New key'), keyForm)));

  async function loadKeys() {
    try {
      const { keys } = await api('GET', '/v1/keys');
      fill(keysBox, h('table', { class: 'list' },
        h('thead', {}, h('tr', {}, ['Name', 'Tenant', 'Roles', 'Groups', 'Created', ''].map((t) => h('th', {}, t)))),
        h('tbody', {}, keys.map((k) => h('tr', { dataset: { id: k.id, name: k.name } },
          h('td', {}, h('strong', {}, k.name), k.id === who.key_id ? h('span', { class: 'muted' }, ' (you)') : null),
          h('td', {}, k.tenant), h('td', {}, (k.roles || []).join(', ')), h('td', {}, (k.groups || []).join(', ')),
          h('td', {}, ago(k.created_at)),
          h('td', {}, k.revoked_at ? h('span', { class: 'muted' }, 'revoked ' + fmtTime(k.revoked_at)) : h('button', { class: 'danger revoke', onclick: async () => {
            if (!confirm(`Revoke key ${k.name}? It stops working at once, and its console sessions end.`)) return;
            try {
              await api('DELETE', '/v1/keys/' + encodeURIComponent(k.id));
              toast('Revoked ' + k.name);
              loadKeys();
            } catch (x) { fill(err, errorBox(x)); }
          } }, 'Revoke')))))));
    } catch (x) {
      fill(keysBox, errorBox(x));
    }
  }

  async function loadLocks() {
    try {
      const locks = (await api('GET', '/v1/locks')).filter((l) => !l.removed_at);
      const describe = (t) => [t.agent && 'agent ' + t.agent, t.session && 'session ' + t.session, t.tool && 'tool ' + t.tool].filter(Boolean).join(', ') || 'the whole tenant';
      fill(locksBox, locks.length ? h('table', { class: 'list' },
        h('thead', {}, h('tr', {}, ['Stops', 'Tenant', 'Reason', 'By', 'Until', ''].map((t) => h('th', {}, t)))),
        h('tbody', {}, locks.map((l) => h('tr', { dataset: { id: l.id } },
          h('td', {}, describe(l.target || {})), h('td', {}, l.tenant), h('td', {}, l.reason), h('td', {}, l.created_by, ' ', ago(l.created_at)),
          h('td', {}, l.expires_at ? fmtTime(l.expires_at) : 'removed by hand'),
          h('td', {}, h('button', { class: 'unlock', onclick: async () => {
            try {
              await api('DELETE', '/v1/locks/' + encodeURIComponent(l.id));
              toast('Lock removed');
              loadLocks();
            } catch (x) { fill(err, errorBox(x)); }
          } }, 'Remove'))))))
        : h('p', { class: 'muted', id: 'no-locks' }, 'No locks: agents run under policy alone.'));
    } catch (x) {
      fill(locksBox, errorBox(x));
    }
  }

  await Promise.all([loadKeys(), loadLocks()]);
}
