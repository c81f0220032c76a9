// The approver's day: sign-in rules, live approvals, approve / edit /
// reject, a question, CSRF, tenants, sign-out. Run by TestConsoleApprovals.
import { run, step, newPage, signIn, shot, assert, eq, base, env, log } from './lib.mjs';

const keys = JSON.parse(env.REIN_KEYS);

run(async (browser) => {
  // A signed-out visitor is sent to sign-in, and comes back after it.
  const anon = await newPage(browser);
  await anon.goto(base + '/inbox');
  eq(new URL(anon.url()).pathname, '/sign-in', 'a signed-out visitor of /inbox lands on');
  eq(new URL(anon.url()).searchParams.get('next'), '/inbox', 'the page to return to');
  const apiAnon = await anon.evaluate(async () => (await fetch('/v1/approvals')).status);
  eq(apiAnon, 401, 'the API without a session');

  // A wrong key and an agent key cannot sign in.
  await signIn(anon, 'rein_thisisnotakey');
  eq(new URL(anon.url()).searchParams.get('error'), 'unknown', 'sign-in with a wrong key');
  assert((await anon.textContent('#message')).includes('not recognised'), 'the page says the key is not recognised');
  await signIn(anon, keys.builder);
  eq(new URL(anon.url()).searchParams.get('error'), 'role', 'sign-in with an agent key');
  assert((await anon.textContent('#message')).includes('agent keys cannot approve'), 'the page says agent keys cannot sign in');
  eq((await anon.context().cookies()).filter((c) => c.name === 'rein_session').length, 0, 'session cookies after refused sign-ins');
  await anon.goto(base + '/inbox');
  eq(new URL(anon.url()).pathname, '/sign-in', 'still signed out after refused sign-ins');
  log('ok: sign-in refuses wrong and agent keys; signed-out visitors are redirected');

  // Alice (approver, tenant acme) signs in and lands on the empty inbox.
  const alice = await newPage(browser);
  await signIn(alice, keys.alice);
  eq(new URL(alice.url()).pathname, '/inbox', 'after sign-in');
  const cookie = (await alice.context().cookies()).find((c) => c.name === 'rein_session');
  assert(cookie && cookie.httpOnly && cookie.sameSite === 'Strict', 'the session cookie is HttpOnly and SameSite=Strict: ' + JSON.stringify(cookie));
  eq(await alice.evaluate(() => document.cookie), '', 'cookies visible to scripts');
  await alice.waitForSelector('#live-state.live');
  await alice.waitForSelector('#inbox-empty:not([hidden])');
  let navigations = 0;
  alice.on('framenavigated', (f) => { if (f === alice.mainFrame()) navigations++; });

  // The agent asks and blocks; the approval appears without a reload.
  const approveID = await step('ask', 'approve');
  const card = alice.locator(`#card-${approveID}`);
  await card.waitFor();
  eq(navigations, 0, 'page loads while the approval arrived');
  const text = await card.innerText();
  for (const want of ['deploy', 'builder', 'run-42', 'ship the billing fix', 'deploys-need-on-call',
    'production deploys need an on-call approval', '"version": "2.4.1"', '0 of 1 approval', 'left', 'group oncall', 'Your vote counts for: group oncall']) {
    assert(text.includes(want), `the approval card shows ${JSON.stringify(want)}; it reads:\n${text}`);
  }
  log('ok: the approval arrived live with its details');

  // More arrive: an edit candidate, a refund to reject, a question.
  const editID = await step('ask', 'edit');
  await alice.locator(`#card-${editID}`).waitFor();
  const rejectID = await step('ask', 'reject');
  await alice.locator(`#card-${rejectID}`).waitFor();
  const questionID = await step('question');
  await alice.locator(`#card-${questionID}`).waitFor();
  eq(navigations, 0, 'page loads while four items arrived');
  // The least time left first (the approvals share one TTL: the oldest
  // first), and the count in the title.
  const order = await alice.$$eval('#inbox > article', (els) => els.map((e) => e.dataset.id));
  const byTimeLeft = await alice.evaluate(async () => {
    const [a, q] = await Promise.all([fetch('/v1/approvals?status=pending').then((r) => r.json()), fetch('/v1/questions?status=pending').then((r) => r.json())]);
    return [...a, ...q].sort((x, y) => (x.expires_at < y.expires_at ? -1 : x.expires_at > y.expires_at ? 1 : x.id < y.id ? -1 : 1)).map((x) => x.id);
  });
  eq(order, byTimeLeft, 'inbox order (least time left first)');
  eq(order.filter((id) => id !== questionID), [approveID, editID, rejectID], 'approvals of one TTL, oldest first');
  eq(await alice.title(), '(4) Inbox · rein', 'the page title');
  // The edit card shows the session's earlier action (the deploy).
  await alice.locator(`#card-${editID} ol.recent li`).first().waitFor();
  assert((await alice.locator(`#card-${editID} ol.recent`).innerText()).includes('deploy'), 'the session\'s recent actions list the deploy');
  assert((await alice.locator(`#card-${editID}`).innerText()).includes('shell.destructive'), 'risk tags shown');
  await alice.waitForTimeout(700); // let the arrival animations end
  await shot(alice, 'console-inbox');

  // CSRF: a cookie-authenticated vote without the token, or with a wrong
  // one, is refused and changes nothing.
  const csrf = await alice.evaluate(async (id) => {
    const send = async (headers) => {
      const r = await fetch(`/v1/approvals/${id}/votes`, { method: 'POST', headers: { 'Content-Type': 'application/json', ...headers }, body: JSON.stringify({ vote: 'approve' }) });
      return [r.status, (await r.json()).error?.code];
    };
    return [await send({}), await send({ 'X-Rein-CSRF': 'forged' })];
  }, approveID);
  eq(csrf, [[403, 'forbidden'], [403, 'forbidden']], 'votes without or with a wrong CSRF token');
  eq(await step('status', approveID), 'pending 0', 'the approval after the refused votes');
  log('ok: CSRF-less votes refused, nothing changed');

  // Approve with the keyboard: the first arrival is selected; "a" approves.
  assert(await alice.locator(`#card-${approveID}.selected`).count() === 1, 'the first approval is selected');
  await alice.keyboard.press('a');
  await alice.locator(`#card-${approveID}`).waitFor({ state: 'detached' });
  log('agent (approve):', await step('agent', 'approve'));

  // Edit: an edit that policy denies is refused; a good one approves the
  // edited arguments, with the diff shown first.
  const edit = alice.locator(`#card-${editID}`);
  await edit.locator('button.edit').click();
  const editor = edit.locator('textarea.json-editor');
  await editor.fill('{"command": "rm -rf /etc/nginx"}');
  await edit.locator('button.confirm-edit').click();
  await edit.locator('.card-msg .error').waitFor();
  assert((await edit.locator('.card-msg').innerText()).includes('409'), 'an edit that policy denies is refused with 409');
  eq(await step('status', editID), 'pending 0', 'the approval after the refused edit');
  await editor.fill('{\n  "command": "rm -rf /srv/app/cache"\n}');
  const diff = await edit.locator('pre.diff').innerText();
  assert(diff.includes('- ') && diff.includes('/srv/app/data') && diff.includes('+ ') && diff.includes('"rm -rf /srv/app/cache"'), 'the diff shows the change:\n' + diff);
  await edit.locator('input.edit-message').fill('only the cache, keep the data');
  await edit.screenshot({ path: `${env.SCREENSHOT_DIR}/console-approval-edit.png` });
  log('screenshot console-approval-edit');
  await edit.locator('button.confirm-edit').click();
  await edit.waitFor({ state: 'detached' });
  log('agent (edit):', await step('agent', 'edit'));

  // Reject with a message, by keyboard: the selection moved to the refund
  // when the edited card left; "r" opens the message, Ctrl+Enter sends.
  // The agent's deny carries the message.
  const rej = alice.locator(`#card-${rejectID}`);
  await alice.locator(`#card-${rejectID}.selected`).waitFor();
  const rest = await alice.$$eval('#inbox > article', (els) => els.map((e) => e.dataset.id));
  const other = rest.find((id) => id !== rejectID);
  await alice.keyboard.press(rest.indexOf(other) > rest.indexOf(rejectID) ? 'j' : 'k');
  await alice.locator(`#card-${other}.selected`).waitFor();
  await alice.keyboard.press(rest.indexOf(other) > rest.indexOf(rejectID) ? 'k' : 'j');
  await alice.locator(`#card-${rejectID}.selected`).waitFor();
  await alice.keyboard.press('r');
  await alice.keyboard.type('over the refund limit; ask finance');
  eq(await rej.locator('textarea.reject-message').inputValue(), 'over the refund limit; ask finance', 'the message typed after "r"');
  await alice.keyboard.press('Control+Enter');
  await rej.waitFor({ state: 'detached' });
  log('agent (reject):', await step('agent', 'reject'));

  // The question, answered by choice.
  const q = alice.locator(`#card-${questionID}`);
  assert((await q.innerText()).includes('Which rollout strategy'), 'the question text');
  await q.locator('button.choice', { hasText: 'blue-green' }).click();
  await q.waitFor({ state: 'detached' });
  eq(await step('question-answer'), 'answered', 'the asking agent');

  // A question with a form: the page generates the fields from its schema.
  const formID = await step('question-form');
  const fq = alice.locator(`#card-${formID}`);
  await fq.locator('form.schema-form').waitFor();
  await fq.getByLabel('Deploy day').fill('2026-12-01');
  await fq.locator('select').selectOption({ label: 'eu-west' });
  await fq.locator('input[type=number]').fill('3');
  await fq.locator('input[type=checkbox]').check();
  await fq.locator('button[type=submit]').click();
  await fq.waitFor({ state: 'detached' });
  eq(await step('question-form-answer'), 'answered', 'the agent that asked with a form');
  await alice.locator('#inbox-empty:not([hidden])').waitFor();
  eq(navigations, 0, 'page loads during the whole inbox session');

  // The approval page of a decided approval shows who decided what.
  await alice.goto(`${base}/approvals/${editID}`);
  await alice.locator('main article.card .votes-list').waitFor();
  const detail = await alice.locator('main').innerText();
  assert(detail.includes('consumed') && detail.includes('alice') && detail.includes('only the cache, keep the data'), 'the approval page shows the edit vote:\n' + detail);

  // A pending approval in acme stays invisible to an approver of tenant other.
  const holdID = await step('ask', 'hold');
  await alice.goto(base + '/inbox');
  await alice.locator(`#card-${holdID} ol.recent li`).first().waitFor();
  await alice.waitForTimeout(700); // the arrival animation
  await shot(alice, 'console-approval', { clip: await alice.locator(`#card-${holdID}`).boundingBox().then((b) => ({ x: 0, y: 0, width: 1280, height: Math.ceil(b.y + b.height + 16) })) });
  const eve = await newPage(browser);
  await signIn(eve, keys.eve);
  await eve.waitForSelector('#live-state.live');
  await eve.waitForSelector('#inbox-empty:not([hidden])');
  eq(await eve.locator('#inbox > article').count(), 0, 'items in the inbox of tenant other');
  eq(await eve.evaluate(async (id) => (await fetch('/v1/approvals/' + id)).status, holdID), 404, 'another tenant reading the approval');
  await eve.goto(`${base}/approvals/${holdID}`);
  await eve.locator('main .error').waitFor();
  assert((await eve.locator('main').innerText()).includes('404'), 'the approval page of another tenant says 404');
  eq(await step('status', holdID), 'pending 0', 'the held approval');
  log('ok: tenant other sees nothing of acme');

  // On a phone.
  const phone = await newPage(browser, { mobile: true });
  await signIn(phone, keys.alice);
  await phone.locator(`#card-${holdID}`).waitFor();
  const overflow = await phone.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert(overflow <= 0, `the inbox fits a phone screen (overflow ${overflow}px)`);
  await phone.waitForTimeout(700);
  await shot(phone, 'console-inbox-phone');

  // Sign-out ends the session in this browser.
  await Promise.all([alice.waitForNavigation(), alice.click('#sign-out')]);
  eq(new URL(alice.url()).pathname, '/sign-in', 'after sign-out');
  await alice.goto(base + '/inbox');
  eq(new URL(alice.url()).pathname, '/sign-in', '/inbox after sign-out');

  for (const [who, p] of [['alice', alice], ['eve', eve], ['phone', phone]]) {
    eq(p.errors.filter((e) => !e.includes('404')), [], `script errors on ${who}'s pages`);
  }
});
