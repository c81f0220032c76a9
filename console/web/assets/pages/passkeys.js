// Devices: notifications of new approvals on this device (Web Push), and
// the signed-in person's passkeys, which confirm votes on approvals that
// need step-up.
import { h, fill, api, errorBox, toast, ago, fmtTime } from '../lib.js';
import { addPasskey } from '../passkey.js';
import * as push from '../push.js';

export async function render(main, { who }) {
  const notifications = h('section', { id: 'notifications', 'aria-labelledby': 'notifications-h' });
  const passkeys = h('section', { id: 'passkeys-section', 'aria-labelledby': 'passkeys-h' });
  fill(main, h('div', { class: 'page-head' }, h('h1', {}, 'Devices')), notifications, passkeys);
  renderNotifications(notifications);
  renderPasskeys(passkeys, who);
}

async function renderNotifications(box) {
  const msg = h('div', { id: 'push-msg' });
  const devices = h('div', { id: 'push-devices' });
  const status = h('p', { id: 'push-status' });
  const label = h('input', { id: 'push-label', maxlength: 80, value: push.deviceName(), autocomplete: 'off' });
  const on = h('button', { type: 'submit', class: 'primary', id: 'push-on' }, 'Notify me on this device');
  const test = h('button', { type: 'button', id: 'push-test' }, 'Send a test notification');
  const form = h('form', { class: 'form', id: 'push-form' },
    h('div', { class: 'field' }, h('label', { for: 'push-label' }, 'Name of this device'), label),
    h('div', { class: 'row' }, on, test));
  fill(box, h('h2', { id: 'notifications-h' }, 'Notifications'),
    h('p', { class: 'muted' }, 'Get a notification on this device when an approval arrives that you may decide, even when the console is closed. It names the agent, the tool and the risk, never the arguments: open it to see the action whole. On an iPhone or iPad, add the console to the Home Screen first.'),
    status, form, msg, devices);

  if (!push.supported()) {
    fill(status, 'This browser cannot receive notifications.');
    on.disabled = true;
  }
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    fill(msg);
    on.disabled = true;
    try {
      const d = await push.subscribe(label.value.trim());
      toast(`Notifications on for ${d.label}`);
    } catch (x) {
      fill(msg, errorBox(x));
    } finally {
      on.disabled = !push.supported();
    }
    load();
  });
  test.addEventListener('click', async () => {
    fill(msg);
    try {
      const r = await api('POST', '/v1/push/test');
      fill(msg, h('p', { class: r.failed.length ? 'notice error' : 'notice ok', id: 'push-test-result' },
        r.sent.length === 0 && r.failed.length === 0 ? 'You have no device to send to.'
          : [`Sent to ${r.sent.length} of ${r.sent.length + r.failed.length} devices.`,
            ...r.failed.map((f) => ` ${f.label}: ${f.error}.`)]));
    } catch (x) {
      fill(msg, errorBox(x));
    }
  });

  async function load() {
    let mine;
    try {
      mine = (await api('GET', '/v1/push')).subscriptions;
    } catch (x) {
      if (x.status === 409) {
        fill(status, 'This server sends no notifications.');
        on.disabled = test.disabled = true;
        return;
      }
      fill(devices, errorBox(x));
      return;
    }
    const sub = await push.current().catch(() => null);
    const here = sub && mine.find((d) => d.endpoint === sub.endpoint);
    if (push.supported()) {
      fill(status, here ? `Notifications are on for this device (${here.label}).` : 'Notifications are off for this device.');
      on.textContent = here ? 'Subscribe this device again' : 'Notify me on this device';
    }
    test.disabled = mine.length === 0;
    fill(devices, mine.length === 0 ? h('p', { class: 'muted', id: 'no-devices' }, 'No device gets your notifications.')
      : h('ul', { class: 'passkey-list', id: 'device-list' }, mine.map((d) => h('li', { 'data-id': d.id },
        h('strong', {}, d.label), here && here.id === d.id ? ' (this device)' : '', ' added ',
        h('span', { title: fmtTime(d.created_at) }, ago(d.created_at)), ' ',
        h('button', { class: 'link', 'aria-label': `Turn off notifications for ${d.label}`, onclick: async () => {
          try {
            await push.unsubscribe(d);
            toast(`Notifications off for ${d.label}`);
          } catch (x) {
            fill(msg, errorBox(x));
          }
          load();
        } }, 'Turn off')))));
  }
  load();
}

function renderPasskeys(box, who) {
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
  fill(box, h('h2', { id: 'passkeys-h' }, 'Passkeys'), form, list);

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
