// Passkeys: the signed-in person's passkeys, which confirm votes on
// approvals that need step-up; add one, remove one.
import { h, fill, api, errorBox, toast, ago, fmtTime } from '../lib.js';
import { addPasskey } from '../passkey.js';

export async function render(main, { who }) {
  const list = h('div', { id: 'passkeys' });
  const msg = h('div');
  const label = h('input', { id: 'pk-label', placeholder: 'laptop', maxlength: 64 });
  const form = h('form', { class: 'form', id: 'passkey-form' },
    h('p', { class: 'muted' }, 'Rules can ask for step-up: an approval then counts your vote only when you confirm it with a passkey (your device\'s fingerprint, face or PIN, or a security key). A passkey belongs to you, ',
      who.name, ', in ', who.tenant, '. Adding a second one needs a confirmation with the first.'),
    h('div', { class: 'field' }, h('label', { for: 'pk-label' }, 'Name of the new passkey'), label),
    h('div', { class: 'row' }, h('button', { type: 'submit', class: 'primary', id: 'add-passkey' }, 'Add a passkey')), msg);
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    fill(msg);
    try {
      const p = await addPasskey(label.value.trim());
      toast(`Passkey ${p.label} added`);
      label.value = '';
      load();
    } catch (x) {
      fill(msg, errorBox(x));
    }
  });
  fill(main, h('div', { class: 'page-head' }, h('h1', {}, 'Passkeys')), form, list);

  async function load() {
    try {
      const { passkeys } = await api('GET', '/v1/passkeys');
      fill(list, passkeys.length === 0 ? h('p', { class: 'muted', id: 'no-passkeys' }, 'You have no passkey yet.')
        : h('ul', { class: 'passkey-list' }, passkeys.map((p) => h('li', { 'data-id': p.id },
          h('strong', {}, p.label), ' added ', h('span', { title: fmtTime(p.created_at) }, ago(p.created_at)),
          p.last_used_at ? [', last used ', ago(p.last_used_at)] : ', never used', ' ',
          h('button', { class: 'link', onclick: async () => {
            try {
              await api('DELETE', `/v1/passkeys/${encodeURIComponent(p.id)}`);
              toast(`Passkey ${p.label} removed`);
              load();
            } catch (x) {
              fill(msg, errorBox(x));
            }
          } }, 'Remove')))));
    } catch (x) {
      fill(list, errorBox(x));
    }
  }
  load();
}
