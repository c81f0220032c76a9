// Activity, session timeline with Stop, audit proofs checked in the page,
// policy simulation, keys and locks. Run by TestConsolePages.
import { run, step, newPage, signIn, shot, assert, eq, base, env, log } from './lib.mjs';

const keys = JSON.parse(env.REIN_KEYS);

run(async (browser) => {
  const ids = JSON.parse(await step('checks'));

  // Activity: every decision, then filtered.
  const olga = await newPage(browser);
  await signIn(olga, keys.olga, '/activity');
  eq(new URL(olga.url()).pathname, '/activity', 'sign-in returns to the page asked for');
  await olga.locator(`#checks tr[data-id="${ids.deny}"]`).waitFor();
  for (const id of Object.values(ids)) assert(await olga.locator(`#checks tr[data-id="${id}"]`).count() === 1, 'activity lists check ' + id);
  await olga.selectOption('#f-decision', 'deny');
  await Promise.all([olga.waitForNavigation(), olga.click('#filters button[type=submit]')]);
  await olga.locator(`#checks tr[data-id="${ids.deny}"]`).waitFor();
  const decisions = await olga.$$eval('#checks tr.clickable td:nth-child(2)', (tds) => tds.map((t) => t.textContent));
  assert(decisions.length >= 1 && decisions.every((d) => d === 'deny'), 'filtered by decision: ' + decisions);
  await olga.goto(base + '/activity?tool=fs.read&session=run-7');
  await olga.locator(`#checks tr[data-id="${ids.read}"]`).waitFor();
  eq(await olga.locator('#checks tr.clickable').count(), 1, 'rows for tool fs.read in run-7');
  await olga.click(`#checks tr[data-id="${ids.read}"]`);
  assert((await olga.locator('#checks tr.detail:not([hidden])').innerText()).includes('succeeded'), 'the check\'s reported result shows');
  log('ok: activity and filters');

  // The session timeline, then Stop (a lock) and Resume.
  await olga.goto(base + '/sessions/run-7');
  await olga.locator(`#timeline li[data-id="${ids.read}"]`).waitFor();
  eq(await olga.locator('#timeline > li').count(), Object.keys(ids).length, 'timeline items');
  const tl = await olga.locator('#timeline').innerText();
  assert(tl.includes('read the config') || tl.includes('fs.read'), 'the timeline shows the checks');
  assert(tl.includes('succeeded') && tl.includes('read 2 files'), 'the timeline shows the result:\n' + tl);
  assert(tl.includes('alice') && tl.includes('approve'), 'the timeline shows the approval vote:\n' + tl);
  await olga.waitForTimeout(300);
  await shot(olga, 'console-session', { fullPage: true });
  await olga.fill('#stop-reason', 'incident 7: runaway loop');
  await olga.click('#stop');
  await olga.locator('#session-lock .notice').waitFor();
  assert((await olga.locator('#session-lock').innerText()).includes('incident 7'), 'the stop shows');
  const stopped = await step('check-in-session');
  assert(stopped.startsWith('deny') && stopped.includes('incident 7'), 'a check in the stopped session: ' + stopped);
  await olga.click('#resume');
  await olga.locator('#stop').waitFor();
  const resumed = await step('check-in-session');
  assert(resumed.startsWith('allow'), 'a check after resuming: ' + resumed);
  log('ok: session stop and resume');

  // An approver sees the timeline without the Stop button.
  const alice = await newPage(browser);
  await signIn(alice, keys.alice, '/sessions/run-7');
  await alice.locator(`#timeline li[data-id="${ids.read}"]`).waitFor();
  eq(await alice.locator('#stop').count(), 0, 'Stop buttons for an approver');
  eq(await alice.locator('nav a[href="/admin"]').count(), 0, 'Admin links for an approver');

  // Audit: the signature and an inclusion proof, checked in the page.
  const audra = await newPage(browser);
  await signIn(audra, keys.audra, '/audit');
  await audra.locator('#signature .proof-ok').waitFor();
  const first = audra.locator('#entries tr[data-index] button.prove').first();
  const index = await first.getAttribute('data-index');
  await first.click();
  await audra.locator('.proof[data-ok=true]').waitFor();
  const root = await audra.locator('.proof .computed-root').innerText();
  eq(root, await audra.locator('#cp-root').innerText(), 'computed root and the checkpoint\'s');
  // Hidden (other tenants') entries are proved from their leaf hash; a
  // changed entry is caught.
  const tampered = await audra.evaluate(async (i) => {
    const m = await import('/assets/merkle.js');
    const note = await (await fetch('/v1/audit/checkpoint')).text();
    const cp = m.parseCheckpoint(note);
    const raw = new Uint8Array(await (await fetch(`/v1/audit/entries?start=${i}&limit=1`)).arrayBuffer()).slice(0, -1);
    const proof = await (await fetch(`/v1/audit/proof/inclusion?index=${i}&size=${cp.size}`)).json();
    const hashes = proof.hashes.map(m.b64decode);
    const good = await m.rootFromInclusion(Number(i), cp.size, await m.leafHash(raw), hashes);
    raw[raw.length - 2] ^= 1;
    const bad = await m.rootFromInclusion(Number(i), cp.size, await m.leafHash(raw), hashes);
    return [m.equal(good, cp.root), m.equal(bad, cp.root)];
  }, index);
  eq(tampered, [true, false], 'the root from the entry as stored, and from a changed entry');
  await shot(audra, 'console-audit');
  eq(await audra.locator('nav a[href="/admin"]').count(), 0, 'Admin links for an auditor');
  log('ok: audit proof checked in the page for entry', index);

  // Policy: version, source, and a simulation with its trace.
  await olga.goto(base + '/policy');
  await olga.locator('#policy-version').waitFor();
  assert((await olga.locator('#policy-version').innerText()).startsWith('sha256:'), 'the policy version');
  assert((await olga.locator('#policy-source').innerText()).includes('deploys-need-on-call'), 'the policy source');
  await olga.fill('#sim-tool', 'deploy');
  await olga.fill('#sim-args', '{"service": "billing", "env": "prod"}');
  await olga.click('#simulate button[type=submit]');
  await olga.locator('#trace').waitFor();
  assert((await olga.locator('.sim-decision').innerText()).startsWith('ask'), 'the simulated decision');
  eq(await olga.locator('#trace tbody tr').count(), 4, 'trace rows (one per rule)');
  eq(await olga.locator('#trace tbody tr.matched td:first-child').allInnerTexts(), ['deploys-need-on-call'], 'matched rules');
  log('ok: policy simulation');

  // Admin: a lock from the form, listed, then removed.
  await olga.goto(base + '/admin');
  await olga.locator('#keys tr[data-name="alice"]').waitFor();
  await olga.locator('summary', { hasText: 'New lock' }).click();
  await olga.fill('#l-tool', 'payments.*');
  await olga.fill('#l-reason', 'refund fraud wave');
  await olga.click('#lock-form button[type=submit]');
  await olga.locator('#locks tr', { hasText: 'refund fraud wave' }).waitFor();
  await olga.evaluate(() => { document.getElementById('toast').hidden = true; });
  await shot(olga, 'console-admin', { fullPage: true });
  await olga.locator('#locks tr', { hasText: 'refund fraud wave' }).locator('button.unlock').click();
  await olga.locator('#no-locks').waitFor();

  // Admin: create a key, sign in with it, revoke it: its session ends.
  await olga.locator('summary', { hasText: 'New key' }).click();
  await olga.fill('#k-name', 'zoe');
  await olga.fill('#k-groups', 'oncall');
  await olga.click('#key-form button[type=submit]');
  const secret = (await olga.locator('#new-secret').innerText()).trim();
  assert(secret.startsWith('rein_'), 'the new key\'s secret is shown once');
  const zoe = await newPage(browser);
  await signIn(zoe, secret);
  eq(new URL(zoe.url()).pathname, '/inbox', 'the new key signs in');
  olga.once('dialog', (d) => d.accept());
  await olga.click('#keys tr[data-name="zoe"] button.revoke');
  await olga.locator('#keys tr[data-name="zoe"] button.revoke').waitFor({ state: 'detached' });
  // The open inbox may itself notice the revocation (its event stream ends)
  // and go to sign-in while this navigation runs: either way ends there.
  await zoe.goto(base + '/inbox').catch((e) => {
    if (!/interrupted by another navigation/.test(String(e))) throw e;
  });
  await zoe.waitForURL(/\/sign-in/, { timeout: 10000 });
  eq(new URL(zoe.url()).pathname, '/sign-in', 'a revoked key\'s console session');
  log('ok: revoking a key ends its console session');

  for (const [who, p] of [['olga', olga], ['alice', alice], ['audra', audra]]) {
    eq(p.errors, [], `script errors on ${who}'s pages`);
  }
});
