// Web Push in Chromium: an approver turns notifications on for this device
// on the Devices page; a new approval she may decide reaches the console's
// service worker as a notification naming the agent, tool and risk; its
// link opens the approval; once decided, the notification goes away; a
// test notification and turning off work. Run by TestConsolePush.
//
// Chromium cannot subscribe to its own push service here (it needs
// Google's servers, and headless Chromium refuses): the first part shows
// the console saying so. For the rest the browser's PushManager.subscribe
// is stood in for by one that returns a subscription to the Go test's push
// service, with keys the Go test holds; everything else is real: the
// service worker, rein's API, rein's encrypted and VAPID-signed messages
// (decrypted by the Go test's push service), and their delivery into the
// service worker over the DevTools protocol.
import { run, step, newPage, signIn, assert, eq, log, base, hold, env, shot } from './lib.mjs';

const keys = JSON.parse(env.REIN_KEYS);

async function notifications(page) {
  return page.evaluate(async () => {
    const reg = await navigator.serviceWorker.getRegistration('/');
    return reg ? (await reg.getNotifications()).map((n) => ({ title: n.title, body: n.body, tag: n.tag, url: n.data && n.data.url })) : [];
  });
}

// registrationId is the DevTools id of the console's service worker.
async function registrationId(page, cdp) {
  assert(await page.evaluate(async () => !!(await navigator.serviceWorker.getRegistration('/'))), 'the service worker is registered');
  return new Promise((resolve) => {
    cdp.on('ServiceWorker.workerRegistrationUpdated', (e) => {
      const r = e.registrations.find((x) => !x.isDeleted && x.scopeURL === base + '/');
      if (r) resolve(r.registrationId);
    });
    cdp.send('ServiceWorker.enable');
  });
}

// deliver hands a push message to the service worker, as the browser does
// when its push service delivers one, then waits (up to 15 s, for a busy
// machine) until the worker shows want notifications; the caller checks
// what they are.
async function deliver(page, cdp, regID, data, want) {
  await cdp.send('ServiceWorker.deliverPushMessage', { origin: base, registrationId: regID, data });
  const until = Date.now() + 15000;
  while ((await notifications(page)).length !== want && Date.now() < until) await page.waitForTimeout(100);
}

run(async (browser) => {
  // 1. The real thing: this Chromium cannot subscribe, and the page says so.
  {
    const page = await newPage(browser);
    await page.context().grantPermissions(['notifications'], { origin: base });
    await signIn(page, keys.fin, '/passkeys');
    await page.waitForSelector('#push-form');
    eq(await page.textContent('nav a[href="/passkeys"]'), 'Devices', 'the nav link');
    await page.click('#push-on');
    await page.waitForFunction(() => document.querySelector('#push-msg .error, #device-list'));
    const err = await page.locator('#push-msg').innerText();
    const listed = await page.locator('#device-list').count();
    assert(err.includes('could not subscribe') && listed === 0 || listed === 1 && (await page.textContent('#device-list')).includes('this device'),
      'a failed subscription is reported and nothing is listed: ' + err);
    log('ok: without a reachable push service:', err || 'subscribed');
    await page.context().close();
  }

  // 2. With the stand-in subscription.
  const device = JSON.parse(await step('device'));
  const page = await newPage(browser, { mobile: true });
  const ctx = page.context();
  await ctx.grantPermissions(['notifications'], { origin: base });
  await ctx.addInitScript((d) => {
    const dec = (s) => Uint8Array.from(atob(s.replace(/-/g, '+').replace(/_/g, '/') + '==='.slice((s.length + 3) % 4)), (c) => c.charCodeAt(0));
    const make = (key) => ({
      endpoint: d.endpoint, expirationTime: null, options: { userVisibleOnly: true, applicationServerKey: dec(key).buffer },
      toJSON: () => ({ endpoint: d.endpoint, expirationTime: null, keys: { p256dh: d.p256dh, auth: d.auth } }),
      getKey: (n) => dec(n === 'p256dh' ? d.p256dh : d.auth).buffer,
      unsubscribe: async () => { localStorage.removeItem('test-push-key'); return true; },
    });
    PushManager.prototype.subscribe = async function (opts) {
      if (!opts || opts.userVisibleOnly !== true || typeof opts.applicationServerKey !== 'string') throw new Error('unexpected subscribe options');
      localStorage.setItem('test-push-key', opts.applicationServerKey);
      return make(opts.applicationServerKey);
    };
    PushManager.prototype.getSubscription = async function () {
      const k = localStorage.getItem('test-push-key');
      return k ? make(k) : null;
    };
  }, device);
  await signIn(page, keys.fin, '/passkeys');
  await page.waitForSelector('#push-status');
  await page.waitForFunction(() => document.querySelector('#push-status').textContent.includes('off'));
  await page.fill('#push-label', 'Fin\'s phone');
  await page.click('#push-on');
  await page.waitForSelector('#device-list li');
  assert((await page.textContent('#device-list')).includes('Fin\'s phone (this device)'), 'the device is listed as this one');
  await page.waitForFunction(() => document.querySelector('#push-status').textContent.includes('on for this device'));
  await shot(page, 'console-notifications-phone');
  eq(await step('subscribed'), 'ok', 'rein has the subscription');
  log('ok: subscribed');

  // 3. A new approval for finance: rein pushes it; the service worker shows it.
  const pushed = JSON.parse(await step('ask'));
  eq(pushed.type, 'approval', 'the message type');
  const cdp = await ctx.newCDPSession(page);
  const regID = await registrationId(page, cdp);
  await deliver(page, cdp, regID, JSON.stringify(pushed), 1);
  let shown = await notifications(page);
  eq(shown.length, 1, 'notifications shown');
  eq(shown[0].title, 'builder wants to run payments.transfer', 'the notification title');
  assert(shown[0].body.includes('Risk: money') && shown[0].body.includes('transfers need finance'), 'the body names the risk and the reason: ' + shown[0].body);
  assert(!shown[0].body.includes('Acme Supplies'), 'the arguments are not on the lock screen');
  eq(shown[0].tag, pushed.id, 'one notification per approval');
  eq(shown[0].url, '/approvals/' + pushed.id + '?revision=1', 'the notification opens the approval, naming the revision it announced');
  log('ok: notification shown');

  // Its link, then one press and hold: the transfer is approved.
  const started = Date.now();
  await page.goto(base + shown[0].url);
  await page.waitForSelector('button.approve');
  await hold(page, page.locator('button.approve'));
  await page.waitForFunction(() => /approved/.test(document.querySelector('main').textContent));
  log(`ok: decided from the notification in ${Date.now() - started} ms`);

  // Decided: rein tells the device, and the notification goes away.
  const closed = JSON.parse(await step('decided'));
  eq(closed.type, 'closed', 'the message after the decision');
  await deliver(page, cdp, regID, JSON.stringify(closed), 0);
  eq((await notifications(page)).length, 0, 'notifications after the decision');

  // A message whose link leaves the console opens the inbox instead.
  await deliver(page, cdp, regID, JSON.stringify({ type: 'approval', id: 'apr_x', title: 't', body: 'b', url: 'https://evil.example/phish' }), 1);
  shown = await notifications(page);
  eq(shown.map((n) => n.url), ['/inbox'], 'a foreign link is replaced');
  await deliver(page, cdp, regID, JSON.stringify({ type: 'closed', id: 'apr_x' }), 0);

  // 4. A test notification, then turning it off.
  await page.goto(base + '/passkeys');
  await page.waitForSelector('#device-list li');
  await page.click('#push-test');
  await page.waitForSelector('#push-test-result');
  eq(await page.textContent('#push-test-result'), 'Sent to 1 of 1 devices.', 'the test result');
  eq(await step('tested'), 'test', 'what the push service got');
  await page.click('#device-list button');
  await page.waitForSelector('#no-devices');
  eq(await page.evaluate(() => localStorage.getItem('test-push-key')), null, 'the browser\'s subscription is gone too');
  eq(await step('devices'), '0', 'devices rein has for fin');
  log('ok: test notification and turning off');
});
