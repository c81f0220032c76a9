// A vote counts only for the version its voter saw: dave edits a payment's
// payee while carol has its approval page and her inbox open. Run by
// TestConsoleRevisions.
import { run, step, newPage, signIn, hold, shot, assert, eq, base, env, log, axe, overflow } from './lib.mjs';

const keys = JSON.parse(env.REIN_KEYS);

// holdEvents keeps the page's event stream from opening until release() is
// called: until then the page hears of no change, as when the live update
// has not arrived yet.
async function holdEvents(page) {
  const held = [];
  let holding = true;
  await page.route(/\/v1\/events\?/, (route) => (holding ? held.push(route) : route.continue()));
  return async () => {
    holding = false;
    for (const r of held) await r.continue();
  };
}

// votesSent records the body of every vote the page sends (of one
// approval, or with batch, of a turn).
function votesSent(page, batch = false) {
  const sent = [];
  const re = batch ? /\/v1\/batches\/[^/]+\/votes$/ : /\/v1\/approvals\/[^/]+\/votes$/;
  page.on('request', (r) => {
    if (r.method() === 'POST' && re.test(r.url())) sent.push(JSON.parse(r.postData() || '{}'));
  });
  return sent;
}

// press approves from the card's action bar (a click, or a press and hold
// for an action that moves money) and returns the HTTP status rein
// answered the vote with.
async function press(page, card) {
  const answered = page.waitForResponse((r) => r.request().method() === 'POST' && /\/v1\/approvals\/[^/]+\/votes$/.test(r.url()));
  const b = card.locator('.actions button.approve');
  if (await b.evaluate((el) => el.classList.contains('hold'))) await hold(page, b, 1500);
  else await b.click();
  return (await answered).status();
}

// willRun reads what a card shows under "Will run": the changes box (if
// any) and the arguments, and whether the changes come first.
function willRun(card) {
  return card.locator('dd.will-run').evaluate((dd) => ({
    first: dd.firstElementChild ? dd.firstElementChild.className : '',
    changes: dd.querySelector('.changes')?.innerText || '',
    args: dd.querySelector('.will-run-args')?.innerText || '',
  }));
}

// showsEdit fails unless the card shows the edited version: acct-mallory
// will run, and what changed from the agent's request comes first.
async function showsEdit(card, where) {
  const w = await willRun(card);
  eq(w.first, 'changes', `the first thing under "Will run" on ${where}`);
  assert(w.changes.includes('dave') && /\bto\b/.test(w.changes) && w.changes.includes('"acct-a"') && w.changes.includes('"acct-mallory"'),
    `${where} says dave changed "to" from acct-a to acct-mallory; it reads:\n${w.changes}`);
  assert(w.args.includes('"acct-mallory"') && !w.args.includes('"acct-a"'), `${where} shows acct-mallory as what will run; it shows:\n${w.args}`);
}

// showsRequest fails unless the card shows the agent's request, unedited.
async function showsRequest(card, where) {
  const w = await willRun(card);
  eq(w.changes, '', `changes shown on ${where}`);
  assert(w.args.includes('"acct-a"') && !w.args.includes('acct-mallory'), `${where} shows the agent's request; it shows:\n${w.args}`);
}

run(async (browser) => {
  const id = await step('ask');
  eq(await step('state'), 'pending 1 ', 'the approval as asked');

  // Carol's approval page and a second inbox hear of nothing (their event
  // streams are held); her first inbox is live.
  const page = await newPage(browser);
  const releasePage = await holdEvents(page);
  const pageVotes = votesSent(page);
  await signIn(page, keys.carol, `/approvals/${id}`);
  const pc = page.locator(`#card-${id}`);
  await pc.locator('.actions button.approve').waitFor();
  await showsRequest(pc, 'the approval page');

  const inbox = await newPage(browser);
  const inboxVotes = votesSent(inbox);
  await signIn(inbox, keys.carol);
  await inbox.waitForSelector('#live-state.live');
  const ic = inbox.locator(`#card-${id}`);
  await ic.locator('.actions button.approve').waitFor();
  await showsRequest(ic, 'the live inbox card');

  const stale = await newPage(browser);
  const releaseStale = await holdEvents(stale);
  const staleVotes = votesSent(stale);
  await signIn(stale, keys.carol);
  const sc = stale.locator(`#card-${id}`);
  await sc.locator('.actions button.approve').waitFor();

  // Dave edits the payee.
  eq(await step('edit'), '2', 'the revision dave made');

  // (b) The live inbox shows the edit as it arrives: what changed first,
  // then the edited arguments, and a notice that it changed.
  await ic.locator('dd.will-run .changes').waitFor();
  await showsEdit(ic, 'the live inbox card');
  assert((await ic.locator('.card-msg').innerText()).includes('Changed since you looked: review again'), 'the live card says the action changed');
  log('ok: the live inbox card shows the edit, what changed first');

  // (a) The approval page still shows the agent's request: carol approves
  // it. rein refuses the vote; the page shows the edit and says so, and
  // sends nothing more.
  await showsRequest(pc, 'the approval page before the live update');
  const refused = await press(page, pc);
  eq(await step('state'), 'pending 2 dave:edit@2', 'the approval after the stale approve from the page');
  eq(pageVotes.map((v) => [v.vote, v.revision]), [['approve', 1]], 'the votes the approval page sent');
  eq(refused, 409, 'rein\'s answer to the stale approve');
  await pc.locator('.changed-notice').waitFor();
  await showsEdit(pc, 'the approval page after the refused vote');
  const notice = await pc.locator('.changed-notice').innerText();
  assert(notice.includes('Changed since you looked: review again') && notice.includes('not counted'), 'the notice of the refused vote: ' + notice);
  eq(await page.locator('dd.revision').innerText().then((x) => x.split(' ')[0]), '2', 'the version the page facts name');
  await pc.locator('.actions button.approve').waitFor();
  await page.waitForTimeout(500);
  eq(pageVotes.length, 1, 'votes the page sent after the refusal (no retry)');
  eq(await step('state'), 'pending 2 dave:edit@2', 'the approval a moment later');
  await shot(page, 'console-approval-changed');
  log('ok: the approval page\'s stale approve was refused; the page shows the edit and says so');

  // The same from an inbox card that has not heard of the edit.
  await showsRequest(sc, 'the stale inbox card');
  eq(await press(stale, sc), 409, 'rein\'s answer to the stale approve from the inbox');
  eq(await step('state'), 'pending 2 dave:edit@2', 'the approval after the stale approve from the inbox');
  eq(staleVotes.map((v) => [v.vote, v.revision]), [['approve', 1]], 'the votes the stale inbox sent');
  await sc.locator('.changed-notice').waitFor();
  await showsEdit(sc, 'the stale inbox card after the refused vote');
  log('ok: the stale inbox card\'s approve was refused; the card shows the edit');

  // (c) On a phone, an open and changed editor leaves no approve of the
  // version shown in the action bar: only "Approve edited arguments", or
  // leaving the editor.
  const phone = await newPage(browser, { mobile: true });
  const phoneVotes = votesSent(phone);
  await signIn(phone, keys.carol, `/approvals/${id}`);
  const fc = phone.locator(`#card-${id}`);
  const bar = fc.locator('.sticky-actions');
  await bar.locator('button.approve').waitFor();
  await showsEdit(fc, 'the phone\'s approval page');
  await bar.locator('button.edit').click();
  const editor = fc.locator('textarea.json-editor');
  assert((await editor.inputValue()).includes('"acct-mallory"'), 'the editor starts from the version shown: ' + await editor.inputValue());
  await editor.fill('{\n  "amount": 5000,\n  "to": "acct-mallory"\n}');
  const offered = await bar.locator('button').allInnerTexts();
  eq(offered.filter((x) => /approve/i.test(x)), ['Approve edited arguments'], 'the approves the phone\'s action bar offers while editing');
  eq(await fc.locator('button.approve').count(), 0, 'approve buttons of the version shown while editing');
  const edited = await bar.locator('button.approve-edited').boundingBox();
  assert(edited && edited.height >= 44 && edited.y + edited.height <= 844, 'approve edited arguments is in reach on the phone: ' + JSON.stringify(edited));
  eq(await overflow(phone), 0, 'sideways overflow of the approval page with the editor open');
  eq(await axe(phone), [], 'axe on the phone with the editor open');
  await shot(phone, 'console-approval-editing-phone');
  await bar.locator('button.cancel-edit').click();
  eq(await fc.locator('textarea.json-editor').count(), 0, 'editors after leaving the editor');
  await bar.locator('button.approve').waitFor();
  eq(phoneVotes.length, 0, 'votes the phone sent');
  log('ok: on a phone, an open editor offers only "Approve edited arguments"');

  // (d) Carol approves the edited version on screen in the live inbox:
  // it counts, and the agent runs what she saw.
  await showsEdit(ic, 'the live inbox card');
  eq(await press(inbox, ic), 200, 'rein\'s answer to the approve of the version shown');
  await ic.waitFor({ state: 'detached' });
  eq(inboxVotes.map((v) => [v.vote, v.revision]), [['approve', 2]], 'the votes the live inbox sent');
  eq(await step('agent'), 'allow acct-mallory', 'what the agent received');
  eq(await step('state'), 'consumed 2 dave:edit@2,carol:approve@2', 'the approval at the end');

  // The held pages hear of it once their streams open, still showing the
  // version carol approved.
  await releasePage();
  await releaseStale();
  await pc.locator('.card-head .badge', { hasText: /approved|consumed/ }).waitFor();
  await showsEdit(pc, 'the approval page once decided');
  eq(await pc.locator('.actions button').count(), 0, 'buttons on the decided approval page');
  eq(await axe(page), [], 'axe on the approval page of an edited action');
  await page.emulateMedia({ colorScheme: 'dark' });
  eq(await axe(page), [], 'axe on the approval page of an edited action, dark');
  await page.emulateMedia({ colorScheme: 'light' });
  log('ok: the edited version carol approved on screen counted; the agent runs it');

  // (e) A turn of two payments, shown in an inbox that hears of nothing:
  // dave edits one; approving all votes on nothing and says so. Shown
  // again, approve all names each payment in the version shown.
  const [t1, t2] = (await step('turn')).split(' ');
  const tp = await newPage(browser);
  const releaseTurn = await holdEvents(tp);
  const turnVotes = votesSent(tp, true);
  await signIn(tp, keys.carol);
  const panel = tp.locator('section.turn[data-batch="turn-1"]');
  await panel.locator('ol.turn-actions > li').nth(1).waitFor();
  eq(await step('edit', t1), '2', 'the revision dave made of the turn\'s first payment');
  await hold(tp, panel.locator('button.approve-all'), 1500);
  await tp.locator('section.turn .turn-msg', { hasText: 'Changed since you looked: review again' }).waitFor();
  eq(turnVotes.length, 0, 'turn votes sent after the turn changed');
  eq([await step('state', t1), await step('state', t2)], ['pending 2 dave:edit@2', 'pending 1 '], 'the turn after approve all of what was shown');
  await releaseTurn();
  const again = tp.locator('section.turn[data-batch="turn-1"]');
  const turnEdited = again.locator(`ol.turn-actions > li[data-id="${t1}"] .will-run`);
  await turnEdited.locator(".changes").waitFor();
  eq(await turnEdited.evaluate((el) => el.firstElementChild.className), 'changes', 'the first thing shown of the edited payment in the turn');
  assert((await turnEdited.locator(".will-run-args").innerText()).includes('"acct-mallory"'), 'the turn shows the edited payment\'s arguments');
  eq(await axe(tp), [], 'axe on the inbox with an edited turn');
  await hold(tp, again.locator('button.approve-all'), 1500);
  await tp.locator('#toast', { hasText: "Approved 2 actions of builder's turn turn-1" }).waitFor();
  eq(turnVotes.map((v) => [v.vote, [...v.approvals].sort()]), [['approve', [`${t1}@2`, `${t2}@1`].sort()]], 'the turn vote sent');
  eq(await step('state', t2), 'pending 1 carol:approve@1', 'the unedited payment after approve all (it needs one more)');
  assert(/^(approved|consumed) 2 dave:edit@2,carol:approve@2$/.test(await step('state', t1)), 'the edited payment after approve all');
  log('ok: a turn edited after it was shown is not voted on; shown again, approve all names each payment\'s version');

  // (f) Dave edits the payment carol approved: her approval no longer
  // counts, and her inbox, live now, shows the edit and asks for her vote
  // again; it counts for the version shown.
  eq(await step('edit', t2), '2', 'the revision dave made of the payment carol approved');
  const c2 = tp.locator(`#card-${t2}`);
  await c2.locator('dd.will-run .changes').waitFor();
  assert((await c2.locator('dd.will-run .will-run-args').innerText()).includes('"acct-mallory"'), 'the card shows the edited payment');
  assert((await c2.locator('.earlier-vote').innerText()).includes('version 1'), 'the card says carol\'s vote was on version 1');
  const tpVotes = votesSent(tp);
  eq(await press(tp, c2), 200, 'rein\'s answer to carol\'s approve of the edited payment');
  eq(tpVotes.map((v) => [v.vote, v.revision]), [['approve', 2]], 'the vote sent');
  assert(/^(approved|consumed) 2 carol:approve@1,dave:edit@2,carol:approve@2$/.test(await step('state', t2)), 'the payment carol approved again');
  log('ok: an approval of an earlier version no longer counts; the card asks for a vote on the version shown');

  for (const [who, p] of [['page', page], ['inbox', inbox], ['stale inbox', stale], ['phone', phone], ['turn\'s inbox', tp]]) {
    eq(p.errors.filter((e) => !/409|Failed to load resource/.test(e)), [], `script errors on the ${who}`);
  }
});
