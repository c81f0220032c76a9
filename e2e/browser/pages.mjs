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
  // Consistency: the first visit remembers the checkpoint; after more
  // entries, the next visit proves that the log only grew.
  await audra.locator('#consistency-first').waitFor();
  const seenKey = await audra.evaluate(() => Object.keys(localStorage).find((k) => k.startsWith('rein.audit.seen.')));
  const firstCP = JSON.parse(await audra.evaluate((k) => localStorage.getItem(k), seenKey));
  eq(String(firstCP.size), (await audra.locator('#cp-size').innerText()).split(' ')[0], 'the remembered checkpoint size');
  await step('check-in-session');
  for (let i = 0; i < 20; i++) {
    await audra.waitForTimeout(500);
    await audra.reload();
    await audra.locator('#consistency h2').waitFor();
    if (Number((await audra.locator('#cp-size').innerText()).split(' ')[0]) > firstCP.size) break;
  }
  await audra.locator('#since-last.proof-ok').waitFor();
  assert((await audra.locator('#since-last').innerText()).includes(`(${firstCP.size} → `), 'the page proves the log grew from the remembered checkpoint');
  await audra.fill('#c-size', String(firstCP.size));
  await audra.fill('#c-root', firstCP.root);
  await audra.click('#consistency-form button[type=submit]');
  await audra.locator('#consistency-result .proof-ok').waitFor();
  const zeros = 'A'.repeat(43) + '=';
  await audra.fill('#c-root', zeros);
  await audra.click('#consistency-form button[type=submit]');
  await audra.locator('#consistency-result .proof-bad').waitFor();
  // A remembered checkpoint this log does not extend is reported, and kept.
  await audra.evaluate(([k, v]) => localStorage.setItem(k, v), [seenKey, JSON.stringify({ ...firstCP, root: zeros })]);
  await audra.reload();
  await audra.locator('#since-last.proof-bad').waitFor();
  eq(JSON.parse(await audra.evaluate((k) => localStorage.getItem(k), seenKey)).root, zeros, 'the checkpoint that failed is kept');
  await audra.evaluate((k) => localStorage.removeItem(k), seenKey);
  await audra.reload();
  await audra.locator('#consistency-first').waitFor();
  await audra.locator('#entries tr[data-index] button.prove').first().click();
  await audra.locator('.proof[data-ok=true]').waitFor();
  log('ok: consistency since the last visit and between two checkpoints, checked in the page');

  // verifyConsistency against the server's proofs for every older size, with
  // each older root computed here from the entries (RFC 6962 MTH).
  const allSizes = await audra.evaluate(async () => {
    const m = await import('/assets/merkle.js');
    const cp = m.parseCheckpoint(await (await fetch('/v1/audit/checkpoint')).text());
    const bytes = new Uint8Array(await (await fetch(`/v1/audit/entries?start=0&limit=${cp.size}`)).arrayBuffer());
    const leaves = [];
    let s = 0;
    for (let i = 0; i < bytes.length; i++) {
      if (bytes[i] !== 10) continue;
      const line = bytes.slice(s, i);
      s = i + 1;
      const e = JSON.parse(new TextDecoder().decode(line));
      leaves.push(e.leaf_hash !== undefined && e.kind === undefined ? m.b64decode(e.leaf_hash) : await m.leafHash(line));
    }
    const mth = async (l) => {
      if (l.length === 1) return l[0];
      let k = 1;
      while (k * 2 < l.length) k *= 2;
      return m.nodeHash(await mth(l.slice(0, k)), await mth(l.slice(k)));
    };
    const out = { size: cp.size, leaves: leaves.length, rootOK: m.equal(await mth(leaves.slice(0, cp.size)), cp.root), good: 0, bad: [] };
    for (let k = 1; k <= cp.size; k++) {
      const old = await mth(leaves.slice(0, k));
      const proof = k === cp.size ? { hashes: [] } : await (await fetch(`/v1/audit/proof/consistency?old=${k}&new=${cp.size}`)).json();
      const hashes = proof.hashes.map(m.b64decode);
      if (await m.verifyConsistency(k, cp.size, old, cp.root, hashes)) out.good++; else out.bad.push(k);
      // a changed older root, or a dropped hash, must fail
      const wrong = Uint8Array.from(old); wrong[0] ^= 1;
      if (await m.verifyConsistency(k, cp.size, wrong, cp.root, hashes)) out.bad.push('wrong root ' + k);
      if (hashes.length && await m.verifyConsistency(k, cp.size, old, cp.root, hashes.slice(1))) out.bad.push('short proof ' + k);
    }
    return out;
  });
  assert(allSizes.rootOK && allSizes.leaves >= allSizes.size, 'the root computed here from every entry: ' + JSON.stringify(allSizes));
  eq([allSizes.good, allSizes.bad], [allSizes.size, []], 'consistency proofs checked here for every older size');
  log(`ok: consistency proofs verified for all ${allSizes.size} older sizes; changed roots and short proofs fail`);

  // Filters by kind and actor.
  const kindsShown = await audra.$$eval('#f-kind option', (os) => os.map((o) => o.value).filter(Boolean));
  assert(kindsShown.length >= 2, 'kinds to filter by: ' + kindsShown);
  const kind = kindsShown[0];
  await audra.selectOption('#f-kind', kind);
  const visibleKinds = await audra.$$eval('#entries tr[data-index]:not([hidden])', (trs) => trs.map((t) => t.dataset.kind));
  assert(visibleKinds.length >= 1 && visibleKinds.every((k) => k === kind), `entries shown for kind ${kind}: ${visibleKinds}`);
  assert(new URL(audra.url()).searchParams.get('kind') === kind, 'the kind is kept in the address');
  await audra.selectOption('#f-kind', '');
  await audra.fill('#f-actor', 'alice');
  await audra.click('#entry-filters button[type=submit]');
  const actors = await audra.$$eval('#entries tr[data-index]:not([hidden])', (trs) => trs.map((t) => t.dataset.actor));
  assert(actors.length >= 1 && actors.every((a) => a.includes('alice')), 'entries shown for actor alice: ' + actors);
  assert((await audra.locator('#entries-shown').innerText()).includes('actor “alice”'), 'the page says what the filter shows');
  await audra.fill('#f-actor', '');
  await audra.click('#entry-filters button[type=submit]');
  log('ok: audit entries filtered by kind', kind, 'and by actor');
  await shot(audra, 'console-audit');
  eq(await audra.locator('nav a[href="/admin"]').count(), 0, 'Admin links for an auditor');
  log('ok: audit proof checked in the page for entry', index);

  // A bundle made in the page, the first two entries as leaf hashes,
  // verifies offline with rein audit verify; tampered, it fails.
  await audra.fill('#b-from', '2');
  const [tarFile] = await Promise.all([audra.waitForEvent('download'), audra.click('#download-bundle')]);
  assert(/^rein-audit-\d+\.tar$/.test(tarFile.suggestedFilename()), 'the bundle file name: ' + tarFile.suggestedFilename());
  const made = await audra.locator('#bundle-result').innerText();
  const m = made.match(/^(\d+) entries \((\d+) in full, (\d+) as leaf hashes\) and \d+ checkpoints in rein-audit-\1\.tar$/);
  // Leaf hashes: the first two, and the entries of other tenants.
  assert(m && Number(m[3]) >= 2 && Number(m[2]) + Number(m[3]) === Number(m[1]), 'the page says what the bundle holds: ' + made);
  const verified = await step('verify-bundle', await tarFile.path());
  assert(verified.startsWith('OK'), 'rein audit verify of the bundle from the page: ' + verified);
  log('ok: audit bundle from the page verified offline:', verified);

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

  // Export: the filtered decisions, as JSON lines and as CSV.
  await olga.goto(base + '/activity?session=run-7');
  await olga.locator(`#checks tr[data-id="${ids.read}"]`).waitFor();
  const download = async (button) => {
    const [d] = await Promise.all([olga.waitForEvent('download'), olga.click(button)]);
    const chunks = [];
    for await (const c of await d.createReadStream()) chunks.push(c);
    return [d.suggestedFilename(), Buffer.concat(chunks).toString('utf8')];
  };
  const [jname, jsonl] = await download('#export-jsonl');
  assert(/^rein-activity-.*\.jsonl$/.test(jname), 'the JSONL file name: ' + jname);
  const exported = jsonl.trim().split('\n').map((l) => JSON.parse(l));
  const inRun7 = await olga.evaluate(async () => (await (await fetch('/v1/checks?session=run-7&limit=500')).json()).map((c) => c.id));
  eq(exported.map((c) => c.id).sort(), inRun7.sort(), 'the checks exported for session run-7');
  assert(Object.values(ids).every((id) => inRun7.includes(id)), 'the session\'s checks include those made here');
  assert(exported.every((c) => c.check.session === 'run-7' && c.facts !== undefined), 'the export holds the API records of run-7');
  await olga.goto(base + '/activity?decision=deny&tool=shell.exec');
  await olga.locator(`#checks tr[data-id="${ids.deny}"]`).waitFor();
  const [cname, csv] = await download('#export-csv');
  assert(cname.endsWith('.csv'), 'the CSV file name: ' + cname);
  const csvLines = csv.trim().split('\r\n');
  assert(csvLines[0].startsWith('time,id,tenant,decision,agent,tool'), 'the CSV header: ' + csvLines[0]);
  eq(csvLines.length, 2, 'CSV lines (header and the one denied check)');
  assert(csvLines[1].includes(`"${ids.deny}"`) && csvLines[1].includes('"deny"') && csvLines[1].includes('rm -rf /etc/nginx'), 'the denied check in the CSV: ' + csvLines[1]);
  assert((await olga.locator('#export-msg').innerText()).includes('1 decision exported as CSV'), 'the page says what it exported');
  log('ok: activity exported as JSONL and CSV, filters applied');

  for (const [who, p] of [['olga', olga], ['alice', alice], ['audra', audra]]) {
    eq(p.errors, [], `script errors on ${who}'s pages`);
  }
});
