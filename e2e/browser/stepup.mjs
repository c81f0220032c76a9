// Step-up with a passkey, in Chromium with a virtual authenticator (the
// DevTools protocol's WebAuthn domain): the approver opens the approval's
// link, signs in with the company's identity provider, is refused until
// she has a passkey, adds one, and approves with it. Run by
// TestStepUpWithPasskeyInChromium.
import { run, step, newPage, shot, assert, eq, log, base, hold } from './lib.mjs';

run(async (browser) => {
  const id = await step('ask');
  assert(id.startsWith('apr_'), 'an approval was created: ' + id);
  const page = await newPage(browser);
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true,
      isUserVerified: true, automaticPresenceSimulation: true },
  });

  // The approval's link, signed out: the sign-in page offers the provider.
  let taps = 0;
  const started = Date.now();
  taps++; // the link
  await page.goto(base + '/approvals/' + id);
  assert(new URL(page.url()).pathname === '/sign-in', 'signed out, the link leads to sign-in: ' + page.url());
  await page.waitForSelector('#oidc-sign-in');
  eq(await page.textContent('#oidc-sign-in'), 'Sign in with Example SSO', 'the provider button');
  await shot(page, 'approvers-sign-in-sso');
  taps++; // Sign in with Example SSO
  await Promise.all([page.waitForNavigation(), page.click('#oidc-sign-in')]);
  assert(page.url().includes('/login/username'), 'at the provider\'s login page: ' + page.url());
  await page.fill('#username', 'carol');
  await page.fill('#password', 'carol-pw');
  taps++; // the provider's Login
  await Promise.all([page.waitForURL((u) => u.pathname === '/approvals/' + id), page.click('button[type=submit]')]);
  await page.waitForSelector('button.approve');
  assert((await page.textContent('#who')).includes('carol@example.com'), 'signed in as carol@example.com');
  log('ok: signed in with the provider and back on the approval');

  // No passkey yet: the vote is refused, nothing is recorded. The payment
  // moves money, so approving it is a press and hold.
  eq(await page.textContent('button.approve'), 'Hold to approve', 'the approve button of a payment');
  await hold(page, page.locator('button.approve'));
  await page.waitForSelector('.notice.error');
  assert((await page.textContent('.notice.error')).includes('no passkey'), 'refused for want of a passkey: ' + await page.textContent('.notice.error'));
  eq(await step('votes'), '0', 'votes after the refused approve');

  // Add a passkey on the Passkeys page.
  await page.click('nav a[href="/passkeys"]');
  await page.waitForSelector('#passkey-form');
  await page.fill('#pk-label', 'laptop');
  await page.click('#add-passkey');
  await page.waitForSelector('.passkey-list li');
  assert((await page.textContent('.passkey-list')).includes('laptop'), 'the passkey is listed');
  const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
  eq(credentials.length, 1, 'credentials in the virtual authenticator');
  await shot(page, 'approvers-passkeys');
  log('ok: passkey added');

  // Approve with it; capture the confirmed vote for the replay checks.
  let captured;
  page.on('request', (req) => {
    if (req.method() === 'POST' && req.url().endsWith(`/v1/approvals/${id}/votes`)) captured = req.postData();
  });
  const before = credentials[0].signCount;
  await page.goto(base + '/approvals/' + id);
  await page.waitForSelector('button.approve');
  await hold(page, page.locator('button.approve'));
  await page.waitForFunction(() => document.body.innerText.includes('approved'));
  eq(await step('waited'), 'allow', 'what the waiting agent got');
  const after = (await cdp.send('WebAuthn.getCredentials', { authenticatorId })).credentials[0].signCount;
  assert(after > before, `the passkey signed (sign count ${before} -> ${after})`);
  assert(captured && JSON.parse(captured).step_up, 'the vote carried a passkey confirmation');
  await shot(page, 'approvers-step-up-approved');
  log('ok: approved with the passkey');

  const cookie = (await page.context().cookies(base)).map((c) => `${c.name}=${c.value}`).join('; ');
  const csrf = await page.evaluate(async () => (await (await fetch('/me')).json()).csrf);
  eq(await step('replay', JSON.stringify({ body: JSON.parse(captured), cookie, csrf })), 'ok', 'replays refused');
  eq(await step('audit'), 'ok', 'the audit log');
  await step('taps', `${taps} ${Date.now() - started}`);
  eq(page.errors.filter((e) => !/status of 40[39]/.test(e)), [], 'page errors');
});
