// An approver's e-mail link in a real browser: the link opens the approval
// (nothing is decided by opening it), one tap on Approve decides it, the
// waiting agent gets allow, and the link cannot be used again. Taps are
// counted from the e-mail on. Run by TestMailLinkInChromium.
import { run, step, newPage, shot, assert, eq, log } from './lib.mjs';

run(async (browser) => {
  const link = await step('ask');
  assert(link.startsWith('http'), 'the Go test found the link in the e-mail: ' + link);
  const page = await newPage(browser, { mobile: true });
  let taps = 0;
  const started = Date.now();

  taps++; // the link in the e-mail
  const opened = await page.goto(link);
  eq(opened.status(), 200, 'the link page status');
  assert((await page.textContent('#args')).includes('ACME Ltd'), 'the page shows the arguments');
  assert((await page.textContent('body')).includes('You decide as carol'), 'the page names the approver');
  eq(await step('votes'), '0', 'votes after opening the link');
  await shot(page, 'approvers-email-link');

  taps++; // Approve
  await Promise.all([page.waitForNavigation(), page.click('button.approve')]);
  assert((await page.textContent('h1')).includes('your vote counts'), 'the page confirms the vote');
  const took = Date.now() - started;
  eq(await step('waited'), 'allow', 'what the waiting agent got');
  await shot(page, 'approvers-email-approved');
  log(`ok: decided in ${taps} taps from the e-mail, ${took} ms in the browser`);
  await step('taps', `${taps} ${took}`);

  // The same link again: refused.
  const again = await page.goto(link);
  eq(again.status(), 410, 'the used link opened again');
  assert((await page.textContent('body')).includes('used already'), 'the page says the link was used');
  eq(page.errors.filter((e) => !e.includes('status of 410')), [], 'page errors');
  log('ok: a used link is refused');
});
