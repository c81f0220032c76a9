// A contained session live in the console: what runs (command, workspace,
// profile), its boundary checks, the destination waiting for people
// ("api.stripe.com:443 from session live-1"), and the Stop that ends every
// process of the run. An approver without admin sees it all but has no
// Stop. Run by TestConsoleLiveSession (e2e/execstop).
import { run, step, newPage, signIn, shot, assert, eq, log, env } from './lib.mjs';

run(async (browser) => {
  const keys = JSON.parse(env.REIN_KEYS);
  const session = await step('running');

  // An approver (no admin): the live view, no Stop.
  const viewer = await newPage(browser);
  await signIn(viewer, keys.alice, '/sessions/' + session);
  await viewer.waitForSelector('#containment:not([hidden])');
  assert((await viewer.textContent('#run-state')).includes('running'), 'the approver sees the run running');
  eq(await viewer.locator('#stop').count(), 0, 'Stop buttons an approver sees');

  const page = await newPage(browser);
  await signIn(page, keys.olga, '/sessions/' + session);
  await page.waitForSelector('#containment:not([hidden])');
  assert((await page.textContent('#run-command')).includes('sleep'), 'the command is shown');
  eq(await page.textContent('#run-workspace'), await step('workspace'), 'the workspace shown');
  assert((await page.textContent('#run-profile')).includes('coding'), 'the profile is shown');
  assert((await page.textContent('#run-state')).includes('running'), 'the run is shown running');
  await page.waitForSelector('#waiting .destination');
  const dest = await page.textContent('#waiting .destination');
  assert(dest.includes('api.stripe.com:443') && dest.includes('from session ' + session), 'the waiting destination: ' + dest);
  assert((await page.textContent('#crossings')).includes('api.stripe.com:443'), 'the boundary check is listed');
  await shot(page, 'console-contained-session');
  const stop = page.locator('#stop');
  assert((await stop.textContent()).includes('end every process'), 'the Stop says what it does');

  const clicked = Date.now();
  await page.fill('#stop-reason', 'runaway agent');
  await stop.click();
  eq(await step('stopped'), 'exit 137, nothing left', 'what became of the run');
  await page.waitForFunction(() => (document.querySelector('#run-state') || {}).textContent?.includes('stopped'), null, { timeout: 15000 });
  // The lock is drawn after the run's state, in the same load.
  await page.waitForFunction(() => (document.querySelector('#session-lock') || {}).textContent?.includes('runaway agent'), null, { timeout: 5000 });
  log(`ok: stopped from the console, the page says so ${Date.now() - clicked} ms after the click`);
  await shot(page, 'console-contained-session-stopped');
  eq(page.errors, [], 'page errors');
  eq(viewer.errors, [], 'the approver page errors');
});
