// Decision-grade at night on a phone: the whole action shown with rein's
// findings marked, press-and-hold for destructive and money-moving
// approvals, honest quorum per approver set, no sideways scrolling, 44 px
// targets, offline and ended sessions, lifecycle badges, shortcuts that can
// be turned off, live announcements, and axe-core on every page in both
// themes and both viewports. Run by TestConsoleDecisions.
import { run, step, newPage, signIn, shot, assert, eq, base, env, log, axe, overflow, smallTargets, hold } from './lib.mjs';

const keys = JSON.parse(env.REIN_KEYS);

run(async (browser) => {
  const alice = await newPage(browser);
  await signIn(alice, keys.alice);
  await alice.waitForSelector('#live-state.live');

  // The page's pure helpers, table-tested in the browser: quorum as rein
  // counts it (approval.go, satisfied), the marks, CSV.
  const table = await alice.evaluate(async () => {
    const { quorum, countsFor, highRisk } = await import('/assets/cards.js');
    const { findMarks, approverWords } = await import('/assets/lib.js');
    const { toCSV } = await import('/assets/pages/activity.js');
    const v = (by, vote, groups = [], roles = ['approver'], byKey = 'key_' + by) => ({ by, vote, groups, roles, by_key: byKey });
    const sets2 = { quorum: 2, approver_sets: [['group:finance'], ['group:oncall']], approvers: ['group:finance', 'group:oncall'] };
    const cases = {
      none: quorum({ ...sets2, votes: [] }),
      oneSet: quorum({ ...sets2, votes: [v('fin', 'approve', ['finance'])] }),
      both: quorum({ ...sets2, votes: [v('fin', 'approve', ['finance']), v('al', 'approve', ['oncall'])] }),
      // the same person with two keys counts once
      twice: quorum({ ...sets2, votes: [v('fin', 'approve', ['finance'], ['approver'], 'k1'), v('fin', 'approve', ['finance', 'oncall'], ['approver'], 'k2')] }),
      // an edit restarts the count: earlier approvals were for other arguments
      edited: quorum({ ...sets2, votes: [v('al', 'approve', ['oncall']), v('fin', 'edit', ['finance'])] }),
      rejectsDoNotCount: quorum({ ...sets2, votes: [v('al', 'reject', ['oncall'])] }),
      noSets: quorum({ quorum: 1, approvers: ['role:approver'], votes: [v('bo', 'approve', [], ['approver'])] }),
      client: quorum({ quorum: 1, approvers: ['client'], votes: [v('someone', 'approve', [], [], 'client:key_gw')] }),
      clientNotByKey: quorum({ quorum: 1, approvers: ['client'], votes: [v('someone', 'approve', [], ['approver'])] }),
    };
    const short = (q) => [q.have, q.need, q.sets.map((s) => (s.met ? '+' : '-') + s.words).join(' '), q.missing.join('; ')];
    return {
      quorum: Object.fromEntries(Object.entries(cases).map(([k, q]) => [k, short(q)])),
      countsFor: [countsFor({ name: 'fin', roles: ['approver'], groups: ['finance'] }, sets2), countsFor({ name: 'x', roles: ['approver'], groups: [] }, sets2)],
      highRisk: [highRisk({ risk: ['shell', 'shell.destructive'] }), highRisk({ risk: ['money'] }), highRisk({ risk: ['sql.destructive'] }), highRisk({ risk: ['shell', 'egress'] })],
      words: ['group:oncall', 'role:approver', 'user:bob', 'client', 'group:a:b'].map(approverWords),
      marks: findMarks('rm -rf /x; firmware rm_old; ./rm x; sudo rm y', [{ text: 'rm', kind: 'cmd' }]).map((m) => m.start),
      csv: toCSV([{ created_at: 't', id: 'c1', decision: 'deny', check: { tool: 'x', agent: 'a' }, reason: '=HYPERLINK("http://evil")', args: { a: 'q' }, risk: [] }]).split('\r\n')[1],
    };
  });
  eq(table.quorum, {
    none: [0, 2, '-group finance -group oncall', '2 more approvals; one from group finance; one from group oncall'],
    oneSet: [1, 2, '+group finance -group oncall', '1 more approval; one from group oncall'],
    both: [2, 2, '+group finance +group oncall', ''],
    twice: [1, 2, '+group finance -group oncall', '1 more approval; one from group oncall'],
    edited: [1, 2, '+group finance -group oncall', '1 more approval; one from group oncall'],
    rejectsDoNotCount: [0, 2, '-group finance -group oncall', '2 more approvals; one from group finance; one from group oncall'],
    noSets: [1, 1, '+role approver', ''],
    client: [1, 1, "+the MCP client's user", ''],
    clientNotByKey: [1, 1, "-the MCP client's user", "one from the MCP client's user"],
  }, 'quorum as rein counts it');
  eq(table.countsFor, [['group finance'], []], 'what a vote counts for');
  eq(table.highRisk, [true, true, true, false], 'approvals needing a deliberate confirm');
  eq(table.words, ['group oncall', 'role approver', 'bob', "the MCP client's user", 'group a:b'], 'approvers in words');
  eq(table.marks, [0, 41], 'where "rm" is marked as a word (not in firmware, rm_old, ./rm)');
  eq(table.csv, '"t","c1","","deny","a","x","","","\'=HYPERLINK(""http://evil"")","","{""a"":""q""}","","","","","",""', 'a CSV row: quoted, the formula defused');
  log('ok: quorum, marks, approver words and CSV table tests');

  // serial: the pages' loads run one at a time, in the order asked for;
  // calls during a run share the one run after it; a failed run does not
  // stop the next.
  const runs = await alice.evaluate(async () => {
    const { serial } = await import('/assets/lib.js');
    const tick = () => new Promise((r) => setTimeout(r, 0));
    const out = [];
    const gates = [];
    let n = 0;
    const load = serial(async () => {
      const i = ++n;
      out.push('start ' + i);
      const ok = await new Promise((r) => gates.push(r));
      out.push('end ' + i);
      if (!ok) throw new Error('run ' + i + ' failed');
      return i;
    });
    const p1 = load();
    const p2 = load();
    const p3 = load();
    await tick();
    out.push('runs under way: ' + gates.length);
    gates[0](false);
    const r1 = await p1.catch((e) => e.message);
    while (gates.length < 2) await tick();
    const p4 = load(); // asked while run 2 is under way: run 3
    gates[1](true);
    const [r2, r3] = [await p2, await p3];
    while (gates.length < 3) await tick();
    gates[2](true);
    return { out, answers: [r1, r2, r3, await p4] };
  });
  eq(runs, { out: ['start 1', 'runs under way: 1', 'end 1', 'start 2', 'end 2', 'start 3', 'end 3'], answers: ['run 1 failed', 2, 2, 3] },
    'serial loads');
  log('ok: loads run one at a time, each call answered by a run that started after it');

  // 1. Lead with the action: a multi-line script shows whole, with what
  // rein found marked, and a single key or a click does not approve it.
  const scriptID = await step('ask', 'script');
  const sc = alice.locator(`#card-${scriptID}`);
  await sc.waitFor();
  await alice.waitForFunction(() => document.getElementById('announce').textContent.includes('New approval: builder asks to run shell.exec'));
  log('ok: the new approval was announced to screen readers');
  const args = await sc.locator('dd.args').innerText();
  for (const line of ['set -euo pipefail', 'echo "rotating releases"', 'rm -rf /srv/app/releases/old', "psql -c 'VACUUM FULL orders'", 'systemctl restart app']) {
    assert(args.includes(line), `the script shows the line ${JSON.stringify(line)}; it reads:\n${args}`);
  }
  assert(!args.includes('show all') && !args.includes('…'), 'nothing of the script is folded:\n' + args);
  eq(await sc.locator('dd.args details').count(), 0, 'folded parts in the arguments');
  await sc.locator('mark.fact').first().waitFor();
  const marked = await sc.locator('mark.fact').allInnerTexts();
  assert(marked.includes('rm'), 'rm is marked: ' + JSON.stringify(marked));
  assert(!marked.includes('ls') && !marked.includes('echo'), 'read-only commands are not marked: ' + JSON.stringify(marked));
  assert((await sc.innerText()).includes('Destructive: approving needs a deliberate confirm'), 'the card says why a confirm is needed');
  eq(await sc.locator('button.approve.hold').count(), 1, 'the approve button of a destructive script is press-and-hold');
  await alice.locator(`#card-${scriptID}.selected`).waitFor();
  await alice.keyboard.press('a');
  await sc.locator('.hold-hint').waitFor();
  await sc.locator('button.approve').click(); // a click is not a hold
  await alice.waitForTimeout(400);
  eq(await step('status', scriptID), 'pending 0', 'the script after the key "a" and a click');
  await hold(alice, sc.locator('button.approve'), 500);
  await alice.waitForTimeout(300);
  eq(await step('status', scriptID), 'pending 0', 'the script after a half-second press');
  await shot(alice, 'console-script', { clip: await sc.boundingBox().then((b) => ({ x: 0, y: 0, width: 1280, height: Math.ceil(b.y + b.height + 16) })) });
  await hold(alice, sc.locator('button.approve'), 1500);
  await sc.waitFor({ state: 'detached' });
  eq(await step('agent', 'script'), 'allow', 'the agent after the hold');
  log('ok: the whole script shows, marked; only press-and-hold approves it');

  // The badge follows the lifecycle: the agent used the grant.
  await alice.goto(`${base}/approvals/${scriptID}`);
  await alice.locator('.card-head .badge').waitFor();
  eq(await alice.locator('.card-head .badge').innerText(), 'consumed', 'the header badge of a used approval');
  await alice.goto(base + '/inbox');
  await alice.waitForSelector('#live-state.live');

  // 2. Honest quorum: a transfer two rules ask for. Fin (finance) opens the
  // notification link on a phone and decides with one press-and-hold.
  const trID = await step('ask', 'transfer');
  const fin = await newPage(browser, { mobile: true });
  await signIn(fin, keys.fin, `/approvals/${trID}`);
  const opened = Date.now();
  const ft = fin.locator(`#card-${trID}`);
  await ft.locator('button.approve').waitFor();
  let text = await ft.innerText();
  for (const want of ['"amount": 12000', 'DE89 3704 0044 0532 0130 00', 'Acme Supplies GmbH', 'Moves money', '0 of 2 approvals',
    'Your vote counts for: group finance', 'not for group oncall', 'group finance: 0 of 1, waiting', 'group oncall: 0 of 1, waiting',
    'transfers-need-finance', 'money leaves the company', 'each of the 2 approver sets below must approve']) {
    assert(text.includes(want), `the transfer shows ${JSON.stringify(want)}; it reads:\n${text}`);
  }
  eq(await ft.locator('ul.asks li').allInnerTexts(), ['transfers-need-finance money leaves the company — asks group finance', 'transfer-review gives no reason — asks group oncall'],
    'each rule that asked, its reason and whom it asks');
  eq(await ft.locator('.sticky-actions').innerText().then((x) => x.replace(/\s+/g, ' ').trim()), 'Your vote counts for: group finance (not for group oncall) Hold to approve Reject… Edit…', 'the action bar of an approver');
  const bar = await ft.locator('.sticky-actions button.approve').boundingBox();
  assert(bar.height >= 48 && bar.y + bar.height <= 844, 'the approve button is in reach on the phone, >= 48 px: ' + JSON.stringify(bar));
  eq(await overflow(fin), 0, 'sideways overflow of the approval page on a phone');
  await shot(fin, 'console-approval-phone');
  await hold(fin, ft.locator('button.approve'), 1500);
  await ft.locator('.card-msg .notice').waitFor();
  const took = Date.now() - opened;
  text = await ft.innerText();
  for (const want of ['Your approval recorded', 'still pending', 'needs 1 more approval and one from group oncall', '1 of 2 approvals',
    'group finance: approved by fin', 'group oncall: 0 of 1, waiting', 'You have voted', 'fin approve', 'counted for group finance']) {
    assert(text.includes(want), `after the vote the card says ${JSON.stringify(want)}; it reads:\n${text}`);
  }
  assert((await fin.locator('#toast').innerText()).includes('still pending'), 'the toast tells the approval is still pending');
  eq(await step('status', trID), 'pending 1', 'the transfer after the finance vote');
  log(`ok: time to decision from the notification link: 1 press-and-hold, ${took} ms from the page showing to the vote recorded`);
  await shot(fin, 'console-quorum-phone');

  const at = alice.locator(`#card-${trID}`);
  await at.locator('.counts-for').waitFor();
  await alice.waitForFunction((id) => document.querySelector(`#card-${id} .votes`)?.textContent === '1 of 2 approvals', trID);
  assert((await at.innerText()).includes('Your vote counts for: group oncall'), 'alice is told her vote counts for on-call');
  // By keyboard: Enter held on the focused button (a short press does nothing).
  await at.locator('button.approve').focus();
  await alice.keyboard.press('Enter');
  await alice.waitForTimeout(300);
  eq(await step('status', trID), 'pending 1', 'the transfer after a short Enter');
  await alice.keyboard.down('Enter');
  await alice.waitForTimeout(1500);
  await alice.keyboard.up('Enter');
  await at.waitFor({ state: 'detached' });
  eq(await step('agent', 'transfer'), 'allow', 'the transfer after both sets approved');
  log('ok: quorum per approver set, told before and after each vote');

  // 4. Offline: the vote is not sent and the page says so.
  const depID = await step('ask', 'deploy');
  const dc = alice.locator(`#card-${depID}`);
  await dc.locator('button.approve').waitFor();
  // The server stops answering (the browser still thinks it is online).
  const down = /\/v1\/|\/me$/;
  await alice.route(down, (r) => r.abort('connectionrefused'));
  await dc.locator('button.approve').click();
  await dc.locator('.card-msg .error').waitFor();
  assert((await dc.locator('.card-msg').innerText()).includes('your vote was not recorded'), 'the card says the vote was not recorded');
  await alice.locator('#offline-banner').waitFor();
  assert(await dc.locator('button.approve').isDisabled(), 'approve is disabled while the server is unreachable');
  await shot(alice, 'console-offline', { clip: { x: 0, y: 0, width: 1280, height: 520 } });
  eq(await step('status', depID), 'pending 0', 'the deploy while the server was unreachable');
  await alice.unroute(down);
  await alice.locator('#offline-banner').waitFor({ state: 'detached', timeout: 15000 });
  await alice.waitForFunction((id) => !document.querySelector(`#card-${id} button.approve`)?.disabled, depID);
  // The browser going offline disables the actions at once.
  await alice.context().setOffline(true);
  await alice.locator('#offline-banner').waitFor();
  assert(await dc.locator('button.approve').isDisabled(), 'approve is disabled while the browser is offline');
  await alice.context().setOffline(false);
  await alice.locator('#offline-banner').waitFor({ state: 'detached', timeout: 15000 });
  await alice.waitForFunction((id) => !document.querySelector(`#card-${id} button.approve`)?.disabled, depID);
  log('ok: offline banner, actions disabled, "your vote was not recorded"; back online, enabled again');

  // Session ended: the typed rejection is kept across signing in again.
  await dc.locator('button.reject').click();
  await dc.locator('textarea.reject-message').fill('not during the freeze');
  await alice.context().clearCookies();
  // The network goes away and comes back while the session has ended: the
  // page finds that by itself (it asks /me until the server answers),
  // keeps the typed text, and the buttons stay disabled, as a vote now
  // would not be recorded.
  await alice.context().setOffline(true);
  await alice.locator('#offline-banner').waitFor();
  await alice.context().setOffline(false);
  await alice.locator('#session-ended').waitFor();
  assert(await dc.locator('button.confirm-reject').isDisabled(), 'the reject button stays disabled once the session has ended, though the server answers again');
  assert((await alice.locator('#session-ended').innerText()).includes('Your vote was not recorded'), 'session ended says the vote was not recorded');
  eq(await dc.locator('textarea.reject-message').inputValue(), 'not during the freeze', 'the typed text after the session ended');
  eq(new URL(alice.url()).pathname, '/inbox', 'the page stays');
  eq(await step('status', depID), 'pending 0', 'the deploy after the ended session');
  await Promise.all([alice.waitForNavigation(), alice.click('#sign-in-again')]);
  await alice.fill('#key', keys.alice);
  await Promise.all([alice.waitForNavigation(), alice.click('button[type=submit]')]);
  eq(new URL(alice.url()).pathname, '/inbox', 'back after signing in again');
  await dc.locator('textarea.reject-message').waitFor();
  eq(await dc.locator('textarea.reject-message').inputValue(), 'not during the freeze', 'the typed text after signing in again');
  await dc.locator('button.confirm-reject').click();
  await dc.waitFor({ state: 'detached' });
  eq(await step('agent', 'deploy'), 'deny', 'the agent after the kept rejection was sent');
  log('ok: session ended keeps the typed text');

  // 5. Single-key shortcuts can be turned off (WCAG 2.1.4).
  const dep2 = await step('ask', 'deploy2');
  await alice.locator(`#card-${dep2}.selected`).waitFor();
  const dtext = await alice.locator(`#card-${dep2}`).innerText();
  assert(dtext.includes('deploys-need-on-call asks for a person; the policy gives no reason for this rule') && !dtext.includes('matched rule'),
    'a rule without a reason is not explained as "matched rule":\n' + dtext);
  await alice.uncheck('#shortcuts-on');
  await alice.locator('body').press('a');
  await alice.waitForTimeout(500);
  eq(await step('status', dep2), 'pending 0', 'the approval after "a" with shortcuts off');
  await alice.reload();
  await alice.locator(`#card-${dep2}`).waitFor();
  eq(await alice.isChecked('#shortcuts-on'), false, 'shortcuts stay off after a reload');
  await alice.check('#shortcuts-on');
  log('ok: shortcuts turned off and on');

  // Compact list mode: the action stays whole, the extras go.
  const full = await alice.locator(`#card-${dep2}`).boundingBox();
  await alice.check('#compact');
  const small = await alice.locator(`#card-${dep2}`).boundingBox();
  assert(small.height < full.height, `a compact card is shorter (${small.height} < ${full.height})`);
  const ctext = await alice.locator(`#card-${dep2}`).innerText();
  assert(ctext.includes('"service": "search"') && ctext.includes('Approve') && ctext.includes('deploys-need-on-call') && !ctext.includes('Intent'), 'a compact card keeps the action and drops the extras:\n' + ctext);
  await alice.reload();
  await alice.locator(`#card-${dep2}`).waitFor();
  eq(await alice.isChecked('#compact'), true, 'compact stays on after a reload');
  await alice.uncheck('#compact');
  log('ok: compact list mode');

  // Keyboard: an activity row opens with Enter.
  const olga = await newPage(browser);
  await signIn(olga, keys.olga, '/activity');
  const row = olga.locator('#checks tr.clickable').first();
  await row.waitFor();
  await row.focus();
  await olga.keyboard.press('Enter');
  assert(await olga.locator('#checks tr.detail:not([hidden])').count() === 1, 'the row\'s details show');

  // 3 and 5: every page fits phones (320-430 px) with 44 px targets, and
  // passes axe-core in both themes at both sizes.
  const qID = await step('question');
  // Fewer open event streams from here on (a browser keeps six connections per server).
  for (const p of [alice, fin]) p.errors = p.errors.filter((e) => !/404|Failed to load resource|ERR_INTERNET_DISCONNECTED/.test(e));
  eq([...alice.errors, ...fin.errors], [], 'script errors on the approvers\' pages');
  await alice.goto('about:blank');
  await fin.goto('about:blank');
  const pages = ['/inbox', `/approvals/${dep2}`, `/approvals/${trID}`, `/questions/${qID}`, '/activity', '/sessions/night-1', '/audit', '/policy', '/admin', '/passkeys'];
  const wait = async (p) => {
    await p.locator('main .page-head h1').waitFor();
    await p.waitForFunction(() => !document.querySelector('main')?.textContent.includes('Loading'), null, { timeout: 5000 }).catch(() => {});
    await p.waitForTimeout(150);
  };
  const problems = [];
  const ctx = olga.context();
  // Each visit in its own tab, closed after: no event stream outlives it.
  const visit = async (path, width, height, scheme) => {
    const p = await ctx.newPage();
    p.errors = [];
    p.on('pageerror', (e) => problems.push(`${path}: script error ${e}`));
    await p.setViewportSize({ width, height });
    await p.emulateMedia({ colorScheme: scheme, reducedMotion: 'reduce' });
    const start = Date.now();
    await p.goto(base + path, { waitUntil: 'domcontentloaded' });
    await wait(p);
    if (Date.now() - start > 5000) log(`slow: ${path} at ${width}px (${scheme}) took ${Date.now() - start} ms to show`);
    return p;
  };
  for (const width of [320, 390, 430]) {
    for (const path of pages) {
      const p = await visit(path, width, 844, 'light');
      // No stray "null" or "undefined" printed where an optional part was absent.
      const stray = await p.evaluate(() => {
        const out = [];
        const w = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
        for (let n = w.nextNode(); n; n = w.nextNode()) {
          if (/^(null|undefined)$/.test(n.data.trim()) && !n.parentElement.matches('pre.json .null, pre.json span, pre.source')) out.push(n.parentElement.className || n.parentElement.tagName);
        }
        return out;
      });
      if (stray.length) problems.push(`${path}: stray null/undefined text in ${stray.join(', ')}`);
      const o = await overflow(p);
      if (o > 0) problems.push(`${path} at ${width}px scrolls sideways by ${o}px`);
      if (width === 390) {
        for (const s of await smallTargets(p)) problems.push(`${path} at ${width}px: tap target under 44px: ${s}`);
        // Heading levels in order: one h1 first, no level skipped.
        const levels = await p.$$eval('h1, h2, h3, h4, h5, h6', (hs) => hs.map((x) => Number(x.tagName[1])));
        if (levels[0] !== 1 || levels.filter((l) => l === 1).length !== 1) problems.push(`${path}: headings ${levels.join(',')} do not start with one h1`);
        levels.forEach((l, i) => { if (i && l > levels[i - 1] + 1) problems.push(`${path}: heading level ${l} follows ${levels[i - 1]}`); });
      }
      await p.close();
    }
  }
  const anon = await newPage(browser);
  const checked = [];
  for (const [w, hgt] of [[1280, 800], [390, 844]]) {
    for (const scheme of ['light', 'dark']) {
      await anon.setViewportSize({ width: w, height: hgt });
      await anon.emulateMedia({ colorScheme: scheme, reducedMotion: 'reduce' });
      await anon.goto(base + '/sign-in');
      for (const v of await axe(anon)) problems.push(`axe /sign-in ${scheme} ${w}px: ${v}`);
      for (const path of pages) {
        const p = await visit(path, w, hgt, scheme);
        if (path === '/activity') await p.locator('#checks tr.clickable').first().click();
        for (const v of await axe(p)) problems.push(`axe ${path} ${scheme} ${w}px: ${v}`);
        checked.push(`${path} ${scheme} ${w}`);
        await p.close();
      }
    }
  }
  const dark = await visit(`/approvals/${dep2}`, 390, 844, 'dark');
  await shot(dark, 'console-approval-dark-phone');
  await dark.close();
  eq(problems, [], 'layout, tap target and accessibility problems');
  const actp = await visit('/activity', 1280, 800, 'light');
  const noReason = await actp.locator('#checks tr.clickable', { hasText: 'deploys-need-on-call' }).allInnerTexts();
  assert(noReason.length > 0 && noReason.every((r) => r.includes('the policy gives no reason for this rule') && !r.includes('matched rule')),
    'activity rows of a rule without a reason: ' + JSON.stringify(noReason));
  await actp.close();
  log(`ok: ${pages.length + 1} pages fit 320-430 px; axe-core found no serious or critical violation in ${checked.length + 4} runs`);

  // An approval whose time runs out while it is shown turns expired, its
  // buttons gone, without a reload.
  const rsID = await step('ask', 'restart');
  await alice.goto(`${base}/approvals/${rsID}`);
  const rs = alice.locator(`#card-${rsID}`);
  await rs.locator('button.approve').waitFor();
  eq(await rs.locator('.card-head .badge').innerText(), 'pending', 'the badge while time is left');
  await rs.locator('.card-head .badge', { hasText: 'expired' }).waitFor({ timeout: 8000 });
  eq(await rs.locator('button').count(), 0, 'buttons on an approval whose time is up');
  eq(await step('agent', 'restart'), 'deny', 'the agent whose approval expired');
  log('ok: an approval that runs out of time shows as expired at once');

  // An approval that arrives while the inbox's first load is under way
  // shows and stays. rein's answer to that first load (taken before the
  // approval existed) is held back until the inbox asked again, or for two
  // seconds, so that the older answer arrives last.
  let heldRoute = false;
  let asked = 0;
  let inFlight = 0;
  let release;
  const released = new Promise((r) => { release = r; });
  let delivered;
  const heldDelivered = new Promise((r) => { delivered = r; });
  const pendingList = /\/v1\/approvals\?status=pending/;
  await alice.route(pendingList, async (route) => {
    if (heldRoute) return route.continue();
    heldRoute = true;
    const answer = await route.fetch();
    await released;
    await route.fulfill({ response: answer });
    delivered();
  });
  const track = { request: 1, requestfinished: -1, requestfailed: -1 };
  for (const [ev, d] of Object.entries(track)) {
    track[ev] = (req) => { if (pendingList.test(req.url())) { inFlight += d; if (d > 0) asked++; } };
    alice.on(ev, track[ev]);
  }
  await alice.goto(base + '/inbox');
  await alice.waitForSelector('#live-state.live');
  const early = await step('ask', 'deploy4');
  const askedAt = Date.now();
  while (asked < 2 && Date.now() - askedAt < 2000) await alice.waitForTimeout(50);
  while (asked >= 2 && inFlight > 1) await alice.waitForTimeout(50); // the newer answer is in
  release();
  await heldDelivered;
  await alice.locator(`#card-${early}`).waitFor();
  while (inFlight > 0) await alice.waitForTimeout(50);
  await alice.waitForTimeout(300); // the page has read every answer
  eq(await alice.locator(`#card-${early}:not(.leaving)`).count(), 1, 'the approval that arrived during the first load, once every answer is in');
  const shown = await alice.locator('#inbox > article:not(.leaving)').count();
  assert((await alice.title()).startsWith(`(${shown}) `), `the title counts the ${shown} items shown: ${await alice.title()}`);
  await alice.unroute(pendingList);
  for (const [ev, f] of Object.entries(track)) alice.off(ev, f);
  log(`ok: an approval asked during the inbox's first load stays when the older answer comes last (${asked} loads)`);

  // An approval asked after the inbox loaded but before its event stream
  // opened (rein sends only what happens after that) shows once it opens.
  let openStream;
  const streamHeld = new Promise((r) => { openStream = r; });
  const eventStream = /\/v1\/events\?/;
  await alice.route(eventStream, async (route) => { await streamHeld; await route.continue(); });
  await alice.goto(base + '/inbox');
  await alice.waitForFunction(() => document.title.startsWith('('));
  const beforeStream = await step('ask', 'deploy5');
  eq(await alice.locator('#live-state').innerText(), 'connecting…', 'the stream while held back');
  eq(await alice.locator(`#card-${beforeStream}`).count(), 0, 'the approval before the stream opened');
  openStream();
  await alice.locator('#live-state.live').waitFor();
  await alice.locator(`#card-${beforeStream}`).waitFor();
  await alice.unroute(eventStream);
  log('ok: an approval asked before the event stream opened shows when it opens');

  // An approval decided here while a load is under way does not come back
  // with that load's answer (taken before the vote, held back until after).
  const decided = await step('ask', 'deploy6');
  await alice.locator(`#card-${decided} button.approve`).waitFor();
  let fetched;
  const stale = new Promise((r) => { fetched = r; });
  let releaseStale;
  const staleHeld = new Promise((r) => { releaseStale = r; });
  let staleRoute = false;
  await alice.route(pendingList, async (route) => {
    if (staleRoute) return route.continue();
    staleRoute = true;
    const answer = await route.fetch();
    fetched();
    await staleHeld;
    await route.fulfill({ response: answer });
  });
  await step('ask', 'deploy7'); // its event starts the load held back
  await stale;
  await alice.evaluate((id) => {
    window.readded = 0;
    new MutationObserver((ms) => { for (const m of ms) for (const n of m.addedNodes) if (n.id === 'card-' + id) window.readded++; })
      .observe(document.getElementById('inbox'), { childList: true });
  }, decided);
  await alice.locator(`#card-${decided} button.approve`).click();
  await alice.locator(`#card-${decided}.leaving`).waitFor({ state: 'attached' });
  const st = await step('status', decided);
  assert(/^(approved|consumed) 1$/.test(st), 'the approval decided while a load was under way: ' + st);
  releaseStale();
  await alice.waitForTimeout(800); // every answer read, the leaving card gone
  eq(await alice.evaluate(() => window.readded), 0, 'times the decided approval came back');
  eq(await alice.locator(`#card-${decided}`).count(), 0, 'cards of the decided approval');
  await alice.unroute(pendingList);
  eq(await step('agent', 'deploy6'), 'allow', 'the agent of the approval decided during a load');
  log('ok: an approval decided during a load does not come back with its older answer');

  // Batch: the approvals of one agent turn decided at once, each action
  // listed whole; a destructive action in the turn makes it a
  // press-and-hold.
  const tDeploy = await step('ask', 'turn-deploy');
  const tShell = await step('ask', 'turn-shell');
  const turn = alice.locator('section.turn[data-batch="turn-9"]');
  await turn.waitFor();
  eq(await turn.locator('ol.turn-actions > li').evaluateAll((ls) => ls.map((l) => l.dataset.id).sort()), [tDeploy, tShell].sort(), 'the actions listed for the turn');
  const listed = await turn.locator('ol.turn-actions').innerText();
  assert(listed.includes('rm -rf /srv/app/tmp') && listed.includes('"version": "4.0.0"'), 'each action of the turn shows whole:\n' + listed);
  eq(await turn.locator('button.approve-all.hold').count(), 1, 'approve all is a press-and-hold with a destructive action in the turn');
  for (const [w, hgt] of [[320, 800], [390, 844]]) {
    await alice.setViewportSize({ width: w, height: hgt });
    const o = await overflow(alice);
    assert(o <= 0, `the inbox with a turn at ${w}px scrolls sideways by ${o}px`);
    eq((await smallTargets(alice)).filter((s) => /approve-all|reject-all/.test(s)), [], `small targets of the turn at ${w}px`);
  }
  await alice.waitForFunction(() => document.getAnimations().every((a) => a.playState !== 'running')); // cards arrive fading in
  eq(await axe(alice), [], 'axe-core on the inbox with a turn');
  await alice.evaluate(() => { window.scrollTo(0, 0); document.getElementById('toast').hidden = true; });
  await shot(alice, 'console-turn-phone');
  await alice.setViewportSize({ width: 1280, height: 900 });
  await turn.locator('button.approve-all').click(); // a click is not a hold
  await alice.waitForTimeout(400);
  eq([await step('status', tDeploy), await step('status', tShell)], ['pending 0', 'pending 0'], 'the turn after a click');
  await turn.locator('button.approve-all').scrollIntoViewIfNeeded();
  await hold(alice, turn.locator('button.approve-all'), 1500);
  await alice.locator('#toast, .toast', { hasText: "Approved 2 actions of builder's turn turn-9" }).first().waitFor();
  eq([await step('agent', 'turn-deploy'), await step('agent', 'turn-shell')], ['allow', 'allow'], 'the agents of the approved turn');
  await turn.waitFor({ state: 'detached' });
  // Reject all, with one message for every agent of the turn.
  const r1 = await step('ask', 'turn2-a');
  const r2 = await step('ask', 'turn2-b');
  const turn2 = alice.locator('section.turn[data-batch="turn-10"]');
  await turn2.locator('button.reject-all').click();
  await turn2.locator('textarea.reject-message').fill('not during the freeze');
  await turn2.locator('button.confirm-reject-all').click();
  await turn2.waitFor({ state: 'detached' });
  eq([await step('status', r1), await step('status', r2)], ['rejected 1', 'rejected 1'], 'the rejected turn');
  eq([await step('agent', 'turn2-a'), await step('agent', 'turn2-b')], ['deny', 'deny'], 'the agents of the rejected turn');
  log('ok: an agent turn approved at once with a press-and-hold, and one rejected at once, each action listed');

  // A turn that grew after it was shown is not voted on: the approver
  // decides only what they saw. Here the inbox's own reloads are held
  // back, so the panel still shows two actions when a third arrives.
  const g1 = await step('ask', 'turn3-deploy');
  const g2 = await step('ask', 'turn3-shell');
  const turn3 = alice.locator('section.turn[data-batch="turn-11"]');
  await turn3.locator('ol.turn-actions > li').nth(1).waitFor();
  let stall = true;
  const stalled = [];
  const inboxList = /\/v1\/approvals\?status=pending&limit=200$/;
  await alice.route(inboxList, (route) => (stall ? stalled.push(route) : route.continue()));
  const g3 = await step('ask', 'turn3-transfer');
  eq(await turn3.locator('ol.turn-actions > li').count(), 2, 'actions shown for the turn before it grew');
  await turn3.locator('button.approve-all').scrollIntoViewIfNeeded();
  await hold(alice, turn3.locator('button.approve-all'), 1500);
  await turn3.locator('.turn-msg', { hasText: 'This turn changed since it was shown (3 pending now): nothing was voted' }).waitFor();
  eq([await step('status', g1), await step('status', g2), await step('status', g3)], ['pending 0', 'pending 0', 'pending 0'], 'the turn that grew, after approve all');
  stall = false;
  for (const r of stalled) await r.continue();
  await alice.unroute(inboxList);
  const turn3now = alice.locator('section.turn[data-batch="turn-11"]');
  await turn3now.locator('ol.turn-actions > li').nth(2).waitFor();
  await turn3now.locator('button.approve-all').scrollIntoViewIfNeeded();
  await hold(alice, turn3now.locator('button.approve-all'), 1500);
  await alice.locator('#toast', { hasText: "Approved 3 actions of builder's turn turn-11; 1 still pending: they need more approvals." }).waitFor();
  eq([await step('agent', 'turn3-deploy'), await step('agent', 'turn3-shell'), await step('status', g3)], ['allow', 'allow', 'pending 1'],
    'the turn approved by an on-call approver: the transfer still needs finance');
  log('ok: a turn that grew after it was shown is not voted on; shown again, approve all counts where the vote counts');

  // Admins stop the asking agent from the card with one tap.
  const dep3 = await step('ask', 'deploy3');
  await olga.setViewportSize({ width: 390, height: 844 });
  await olga.goto(`${base}/approvals/${dep3}`);
  const stop = olga.locator(`#card-${dep3} button.stop-agent`);
  eq(await stop.innerText(), 'Stop agent builder', 'the stop button');
  await stop.click();
  await olga.locator(`#card-${dep3} .card-head .badge`, { hasText: 'invalidated' }).waitFor();
  eq(await step('agent', 'deploy3'), 'deny', 'the agent after it was stopped');
  const locks = await olga.evaluate(async () => (await (await fetch('/v1/locks')).json()).filter((l) => l.target?.agent === 'builder' && !l.removed_at));
  eq(locks.length, 1, 'locks on agent builder');
  assert(locks[0].reason.includes('stopped from the console by olga'), 'the lock says who stopped the agent: ' + locks[0].reason);
  log('ok: an admin stopped the agent from the card with one tap');

  for (const [who, p] of [['alice', alice], ['fin', fin], ['olga', olga], ['anon', anon]]) {
    eq(p.errors.filter((e) => !/404|Failed to load resource|ERR_INTERNET_DISCONNECTED/.test(e)), [], `script errors on ${who}'s pages`);
  }
});
