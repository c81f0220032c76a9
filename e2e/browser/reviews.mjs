// Reviews after the fact in the console: the list, one review with what was
// allowed shown as text, a concern that locks the agent, per-rule counts,
// another tenant seeing nothing, accessibility and phone layout. Run by
// TestConsoleReviews.
import { run, step, newPage, signIn, shot, assert, eq, base, env, log, axe, overflow } from './lib.mjs';

const keys = JSON.parse(env.REIN_KEYS);

run(async (browser) => {
  const { review, hostile } = JSON.parse(await step('allowed'));

  // The list: the open reviews, each linking to its page.
  const olga = await newPage(browser);
  await signIn(olga, keys.olga, '/reviews');
  eq(new URL(olga.url()).pathname, '/reviews', 'sign-in returns to the reviews page');
  await olga.locator('nav a').first().waitFor(); // the navigation is drawn once the page knows who is signed in
  assert(await olga.locator('nav a[href="/reviews"]').count() === 1, 'Reviews is in the navigation');
  await olga.locator(`#reviews li[data-id="${review}"]`).waitFor();
  await olga.locator(`#reviews li[data-id="${hostile}"]`).waitFor();
  eq(await axe(olga), [], 'serious or critical axe-core violations on /reviews');
  await shot(olga, 'console-reviews', { fullPage: true });

  // A review whose arguments carry HTML: shown as text, nothing runs.
  await olga.goto(base + '/reviews/' + hostile);
  await olga.locator('#review .json').first().waitFor();
  const shown = await olga.locator('#review').innerText();
  assert(shown.includes('<img src=x onerror=alert(1)>'), 'the arguments show as text:\n' + shown);
  eq(await olga.locator('#review img').count(), 0, 'images made from the arguments');
  eq(await olga.evaluate(() => window.__pwned === true), false, 'script from the arguments ran');

  // The deploy review: what was allowed, the session, then a concern that
  // locks the agent.
  await olga.goto(base + '/reviews/' + review);
  await olga.locator('#review-concern').waitFor();
  const text = await olga.locator('#review').innerText();
  for (const want of ['deploy', 'builder', 'deploy-reviewed', 'docs-prod']) assert(text.includes(want), `the review shows ${want}:\n${text}`);
  await olga.locator(`#review-session li.reviewed`).waitFor();
  eq(await axe(olga), [], 'serious or critical axe-core violations on /reviews/ID');
  await olga.click('#review-concern'); // without a message: refused in the page
  assert((await olga.locator('#verdict .card-msg').innerText()).includes('needs a message'), 'a concern without a message is refused');
  await olga.fill('#review-message', 'deployed docs to prod during the freeze');
  await olga.selectOption('#review-lock', 'agent');
  await olga.click('#review-concern');
  await olga.locator('#review dd .badge.concern').waitFor();
  assert((await olga.locator('#review').innerText()).includes('deployed docs to prod during the freeze'), 'the verdict shows');
  const next = await step('agent-check');
  assert(next.startsWith('deny'), 'the agent after the concern that locked it: ' + next);
  log('ok: a concern with a lock denies the agent\'s next check');

  // Per rule: the deploy rule drew a concern.
  await olga.goto(base + '/reviews?status=all');
  await olga.locator('#review-stats tr[data-rule="deploy-reviewed"]').waitFor();
  const row = await olga.locator('#review-stats tr[data-rule="deploy-reviewed"]').innerText();
  assert(/\t1\t0\t0\t1\t100%/.test(row.replace(/\s*\t\s*/g, '\t')) || row.includes('100%'), 'per-rule counts: ' + row);
  log('ok: per-rule counts');

  // An approver without admin marks ok; no lock control is offered.
  const alice = await newPage(browser, { mobile: true });
  await signIn(alice, keys.alice, '/reviews/' + hostile);
  await alice.locator('#review-ok').waitFor();
  eq(await alice.locator('#review-lock').count(), 0, 'lock controls for an approver');
  eq(await overflow(alice), 0, 'horizontal overflow of a review on a phone');
  await alice.click('#review-ok');
  await alice.locator('#review dd .badge.ok').waitFor();

  // Another tenant's approver sees no review, and cannot open one.
  const eve = await newPage(browser);
  await signIn(eve, keys.eve, '/reviews?status=all');
  await eve.locator('#reviews li').first().waitFor();
  eq(await eve.locator('#reviews li[data-id]').count(), 0, 'reviews another tenant sees');
  await eve.goto(base + '/reviews/' + review);
  await eve.locator('.notice, .error').first().waitFor();
  assert(!(await eve.locator('main').innerText()).includes('docs-prod'), 'another tenant sees the review');
  log('ok: reviews list, page, verdicts and tenants');
});
