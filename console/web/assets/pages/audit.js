// Audit: the latest signed checkpoint (signature checked here), the latest
// entries, and for any entry its inclusion proof, recomputed in the page
// with WebCrypto SHA-256 up to the checkpoint's root hash.
import { h, fill, api, errorBox, fmtTime, fmtShort, badge } from '../lib.js';
import { parseCheckpoint, verifySignature, leafHash, rootFromInclusion, verifyConsistency, b64decode, b64encode, equal } from '../merkle.js';
import { makeBundle, tar } from '../bundle.js';

const PAGE = 50;

export async function render(main) {
  const cpBox = h('section', { class: 'panel', id: 'checkpoint' }, h('h2', {}, 'Latest checkpoint'), h('p', { class: 'muted' }, 'Loading…'));
  const tbody = h('tbody', { id: 'entries' });
  const jump = h('input', { id: 'jump', type: 'number', min: 0, placeholder: 'index', 'aria-label': 'First index to show' });
  const err = h('div');
  const q = new URLSearchParams(location.search);
  const kindSel = h('select', { id: 'f-kind', name: 'kind' }, h('option', { value: '' }, 'any'));
  const actorIn = h('input', { id: 'f-actor', name: 'actor', value: q.get('actor') || '', placeholder: 'alice' });
  const shown = h('p', { class: 'muted', id: 'entries-shown', role: 'status' });
  const older = h('button', { type: 'button', id: 'older', onclick: () => loadOlder() }, 'Older entries');
  const filters = h('form', { class: 'filters', id: 'entry-filters', onsubmit: (e) => { e.preventDefault(); applyFilters(true); } },
    h('div', { class: 'field' }, h('label', { for: 'f-kind' }, 'Kind'), kindSel),
    h('div', { class: 'field' }, h('label', { for: 'f-actor' }, 'Actor'), actorIn),
    h('button', { type: 'submit', class: 'primary' }, 'Filter'));
  kindSel.addEventListener('change', () => applyFilters(true));
  const consResult = h('div', { id: 'consistency-result', role: 'status' });
  const cSize = h('input', { id: 'c-size', type: 'number', min: 1, placeholder: '1024' });
  const cRoot = h('input', { id: 'c-root', placeholder: 'base64 root hash', spellcheck: 'false' });
  const consSeen = h('div', { id: 'consistency-seen' }, h('p', { class: 'muted' }, 'Waiting for the checkpoint…'));
  const consBox = h('section', { class: 'panel', id: 'consistency' }, h('h2', {}, 'Consistency'), consSeen,
    h('form', { class: 'filters', id: 'consistency-form', onsubmit: (e) => { e.preventDefault(); checkOlder(); } },
      h('div', { class: 'field' }, h('label', { for: 'c-size' }, 'Older tree size'), cSize),
      h('div', { class: 'field wide' }, h('label', { for: 'c-root' }, 'Its root hash'), cRoot),
      h('button', { type: 'submit' }, 'Prove consistency')),
    consResult);
  // A bundle for offline verification, made here from rein's answers.
  const bFrom = h('input', { id: 'b-from', type: 'number', min: 0, value: '0' });
  const bTo = h('input', { id: 'b-to', type: 'number', min: 1, placeholder: 'latest' });
  const bundleMsg = h('div', { id: 'bundle-result', role: 'status' });
  const bundleBox = h('section', { class: 'panel', id: 'bundle' }, h('h2', {}, 'Bundle for offline verification'),
    h('p', { class: 'muted' }, 'The entries up to a checkpoint, the signed checkpoints and the keys, as ', h('code', {}, 'rein audit export'),
      ' writes them, in one tar file: ', h('code', {}, 'tar xf'), ' it, then ', h('code', {}, 'rein audit verify DIR --key KEY'),
      '. Entries before the first index are included as their leaf hashes.'),
    h('form', { class: 'filters', id: 'bundle-form', onsubmit: (e) => { e.preventDefault(); downloadBundle(); } },
      h('div', { class: 'field' }, h('label', { for: 'b-from' }, 'First index in full'), bFrom),
      h('div', { class: 'field' }, h('label', { for: 'b-to' }, 'Up to tree size'), bTo),
      h('button', { type: 'submit', id: 'download-bundle' }, 'Download bundle')),
    bundleMsg);
  async function downloadBundle() {
    fill(bundleMsg, h('p', { class: 'muted' }, 'Making the bundle…'));
    try {
      const checkpoints = await (await api('GET', '/v1/audit/checkpoints?from=1', undefined, { raw: true })).text();
      const { keys } = await api('GET', '/v1/audit/keys');
      const entries = async (start, limit) => new Uint8Array(await (await api('GET', `/v1/audit/entries?start=${start}&limit=${limit}`, undefined, { raw: true })).arrayBuffer());
      const b = await makeBundle({ checkpoints, entries, keys, from: Number(bFrom.value || 0), to: bTo.value === '' ? -1 : Number(bTo.value) });
      const dir = `rein-audit-${b.end}`;
      const blob = new Blob([tar(b.files.map((f) => ({ name: `${dir}/${f.name}`, bytes: f.bytes })))], { type: 'application/x-tar' });
      const a = h('a', { href: URL.createObjectURL(blob), download: `${dir}.tar` });
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(a.href), 10000);
      fill(bundleMsg, h('p', { class: 'proof-ok' }, `${b.end} entries (${b.manifest.full} in full, ${b.manifest.hidden} as leaf hashes) and ${b.manifest.checkpoints} checkpoints in ${dir}.tar`));
    } catch (e) {
      fill(bundleMsg, errorBox(e));
    }
  }
  fill(main, h('div', { class: 'page-head' }, h('h1', {}, 'Audit log')), err, cpBox, consBox, bundleBox,
    h('section', { class: 'panel' }, h('h2', {}, 'Entries'),
      h('form', { class: 'row', onsubmit: (e) => { e.preventDefault(); if (jump.value !== '') loadEntries(Number(jump.value)); } },
        h('label', { for: 'jump' }, 'Show from index'), jump, h('button', { type: 'submit' }, 'Show'),
        h('button', { type: 'button', onclick: () => loadEntries(null) }, 'Latest')),
      filters, shown,
      h('table', { class: 'list' }, h('thead', {}, h('tr', {}, ['#', 'Time', 'Kind', 'Tenant', 'Actor', 'Subject', ''].map((t) => h('th', {}, t)))), tbody),
      h('p', {}, older)));
  let first = null; // the lowest index loaded
  const kinds = new Set();

  // Filters by entry kind and actor, over the entries loaded (Older entries
  // loads more); kept in the address so a filtered view can be shared.
  function applyFilters(push) {
    const kind = kindSel.value;
    const actor = actorIn.value.trim().toLowerCase();
    let n = 0;
    let all = 0;
    for (const tr of tbody.querySelectorAll('tr[data-index]')) {
      all++;
      const ok = (!kind || tr.dataset.kind === kind) && (!actor || (tr.dataset.actor || '').toLowerCase().includes(actor));
      tr.hidden = !ok;
      if (!ok) tr.nextElementSibling.hidden = true;
      if (ok) n++;
    }
    shown.textContent = kind || actor ? `${n} of ${all} loaded entries match${kind ? ' kind ' + kind : ''}${actor ? (kind ? ' and' : '') + ' actor “' + actorIn.value.trim() + '”' : ''}.` : `${all} entries loaded.`;
    if (push) {
      const u = new URLSearchParams(location.search);
      for (const [k, v] of [['kind', kind], ['actor', actorIn.value.trim()]]) { if (v) u.set(k, v); else u.delete(k); }
      history.replaceState(null, '', location.pathname + (u.toString() ? '?' + u : ''));
    }
  }

  function addKinds(rows) {
    for (const { e } of rows) if (e.kind) kinds.add(e.kind);
    const want = kindSel.value || q.get('kind') || '';
    if (want) kinds.add(want);
    fill(kindSel, h('option', { value: '' }, 'any'), [...kinds].sort().map((k) => h('option', { value: k, selected: k === want }, k)));
  }

  async function fetchRows(start, limit) {
    const r = await api('GET', `/v1/audit/entries?start=${start}&limit=${limit}`, undefined, { raw: true });
    const bytes = new Uint8Array(await r.arrayBuffer());
    const lines = [];
    let s = 0;
    for (let i = 0; i < bytes.length; i++) {
      if (bytes[i] === 10) { lines.push(bytes.slice(s, i)); s = i + 1; }
    }
    const dec = new TextDecoder();
    return lines.map((b) => ({ bytes: b, e: JSON.parse(dec.decode(b)) })).reverse();
  }

  async function loadOlder() {
    if (!first) return;
    const start = Math.max(0, first - PAGE);
    try {
      const rows = await fetchRows(start, first - start);
      first = start;
      tbody.append(...rows.flatMap(row));
      addKinds(rows);
      applyFilters(false);
      older.hidden = first === 0;
    } catch (e) {
      fill(err, errorBox(e));
    }
  }

  let cp = null;
  try {
    const r = await api('GET', '/v1/audit/checkpoint', undefined, { raw: true });
    const note = await r.text();
    cp = parseCheckpoint(note);
    const sigLine = h('span', { id: 'signature' }, 'checking the signature…');
    fill(cpBox, h('h2', {}, 'Latest checkpoint'),
      h('dl', { class: 'facts' },
        h('dt', {}, 'Origin'), h('dd', {}, h('code', {}, cp.origin)),
        h('dt', {}, 'Tree size'), h('dd', { id: 'cp-size' }, String(cp.size), ' entries'),
        h('dt', {}, 'Root hash'), h('dd', {}, h('code', { id: 'cp-root' }, cp.rootB64)),
        h('dt', {}, 'Signature'), h('dd', {}, sigLine)),
      h('details', {}, h('summary', {}, 'the signed note'), h('pre', { class: 'source' }, note)));
    try {
      const { keys } = await api('GET', '/v1/audit/keys');
      const by = await verifySignature(cp, keys.map((k) => k.verifier));
      fill(sigLine, by ? h('span', { class: 'proof-ok' }, '✓ Ed25519 signature valid') : h('span', { class: 'proof-bad' }, '✗ no valid signature by a known key'),
        by ? h('span', { class: 'muted' }, ' · key ' + by.slice(0, by.indexOf('+', by.indexOf('+') + 1))) : null);
      await sinceLastVisit(!!by);
    } catch (e) {
      fill(sigLine, h('span', { class: 'muted' }, 'not checked here: ' + e.message));
    }
  } catch (e) {
    fill(cpBox, h('h2', {}, 'Latest checkpoint'), errorBox(e));
  }

  // Consistency: the page remembers, in this browser, the last checkpoint
  // whose signature it checked, and on the next visit proves that the log
  // only grew since (RFC 9162 consistency proof, checked here). A failed
  // proof keeps the old checkpoint: it is the evidence.
  async function consistency(oldSize, oldRoot) {
    if (oldSize > cp.size) return { ok: false, why: `the older tree (${oldSize}) is larger than the checkpoint's (${cp.size})` };
    const proof = oldSize === cp.size ? { hashes: [] } : await api('GET', `/v1/audit/proof/consistency?old=${oldSize}&new=${cp.size}`);
    const ok = await verifyConsistency(oldSize, cp.size, oldRoot, cp.root, proof.hashes.map(b64decode));
    return { ok, why: ok ? '' : 'the proof does not lead from the older root to this checkpoint\'s root', n: proof.hashes.length };
  }

  async function sinceLastVisit(signed) {
    const key = 'rein.audit.seen.' + cp.origin;
    let seen = null;
    try { seen = JSON.parse(localStorage.getItem(key) || 'null'); } catch (_) { /* none */ }
    const remember = () => {
      if (!signed) return;
      try { localStorage.setItem(key, JSON.stringify({ size: cp.size, root: cp.rootB64, at: new Date().toISOString() })); } catch (_) { /* storage off */ }
    };
    if (!seen || !seen.size || !seen.root) {
      fill(consSeen, h('p', { class: 'muted', id: 'consistency-first' }, `No earlier checkpoint seen in this browser. This one (${cp.size} entries) is remembered: on your next visit the page proves that the log only grew since.`));
      remember();
      return;
    }
    let r;
    try {
      r = await consistency(seen.size, b64decode(seen.root));
    } catch (e) {
      fill(consSeen, errorBox(e));
      return;
    }
    if (r.ok) {
      fill(consSeen, h('p', { class: 'proof-ok', id: 'since-last' }, `✓ The log only grew since the checkpoint you saw on ${fmtTime(seen.at)} (${seen.size} → ${cp.size} entries): ${r.n} hashes lead from its root to this one, checked here.`));
      remember();
    } else {
      fill(consSeen, h('p', { class: 'proof-bad', id: 'since-last' }, `✗ The checkpoint you saw on ${fmtTime(seen.at)} (${seen.size} entries, root ${seen.root}) is not a prefix of this one: ${r.why}. Either the log was rewritten or this server shows you another log; keep both checkpoints.`));
    }
  }

  async function checkOlder() {
    fill(consResult);
    if (!cp) return;
    try {
      const root = b64decode(cRoot.value.trim());
      if (root.length !== 32) throw new Error('the root hash must be 32 bytes in base64');
      const r = await consistency(Number(cSize.value), root);
      fill(consResult, r.ok
        ? h('p', { class: 'proof-ok' }, `✓ The tree of ${cSize.value} entries with that root is a prefix of the checkpoint's tree of ${cp.size}: ${r.n} hashes checked here.`)
        : h('p', { class: 'proof-bad' }, `✗ Not consistent: ${r.why}.`));
    } catch (e) {
      fill(consResult, errorBox(e));
    }
  }

  async function loadEntries(from) {
    const start = from ?? Math.max(0, (cp ? cp.size : 0) - PAGE + 5);
    try {
      const rows = await fetchRows(start, PAGE);
      first = rows.length ? start : null;
      older.hidden = !first;
      fill(tbody, rows.length ? rows.map(row) : h('tr', {}, h('td', { colspan: 7, class: 'muted' }, 'No entries here.')));
      addKinds(rows);
      applyFilters(false);
      fill(err);
    } catch (e) {
      fill(err, errorBox(e));
    }
  }

  function row({ bytes, e }) {
    const hidden = e.leaf_hash !== undefined && e.kind === undefined;
    const out = h('td', { colspan: 7 });
    const detail = h('tr', { class: 'detail', hidden: true }, out);
    const prove = h('button', { class: 'prove', dataset: { index: e.index } }, 'Verify inclusion');
    prove.addEventListener('click', async () => {
      detail.hidden = false;
      fill(out, h('p', { class: 'muted' }, 'Fetching the proof…'));
      try {
        fill(out, await proveEntry(e, bytes, hidden));
      } catch (x) {
        fill(out, errorBox(x));
      }
    });
    const tr = h('tr', { dataset: { index: e.index, kind: e.kind || '', actor: e.actor || '' } },
      h('td', {}, String(e.index)),
      h('td', { title: hidden ? null : fmtTime(e.ts) }, hidden ? h('span', { class: 'muted' }, 'hidden') : fmtShort(e.ts)),
      h('td', {}, hidden ? h('span', { class: 'muted' }, 'another tenant\'s entry (leaf hash only)') : h('code', {}, e.kind)),
      h('td', {}, e.tenant ?? ''),
      h('td', {}, e.actor ?? ''),
      h('td', {}, e.subject ? h('code', {}, e.subject) : ''),
      h('td', {}, prove, hidden ? null : h('button', { class: 'link', onclick: () => {
        detail.hidden = !detail.hidden;
        if (!detail.hidden) fill(out, h('pre', { class: 'json' }, JSON.stringify(e, null, 2)));
      } }, 'show')));
    return [tr, detail];
  }

  async function proveEntry(e, bytes, hidden) {
    if (!cp) throw new Error('no checkpoint to check against');
    if (e.index >= cp.size) {
      return h('p', { class: 'notice' }, `Entry #${e.index} is newer than the latest checkpoint (size ${cp.size}); checkpoints are signed every second: reload the page to prove it.`);
    }
    const proof = await api('GET', `/v1/audit/proof/inclusion?index=${e.index}&size=${cp.size}`);
    const leaf = hidden ? b64decode(e.leaf_hash) : await leafHash(bytes);
    const leafOK = equal(leaf, b64decode(proof.leaf_hash));
    const root = await rootFromInclusion(e.index, cp.size, leaf, proof.hashes.map(b64decode));
    const ok = leafOK && root && equal(root, cp.root);
    return h('div', { class: 'proof', dataset: { ok: String(!!ok) } },
      h('p', { class: ok ? 'proof-ok' : 'proof-bad' }, ok
        ? `✓ Entry #${e.index} is in the checkpoint's tree of ${cp.size} entries: its proof leads to the signed root hash.`
        : `✗ The proof does not check: ${!leafOK ? 'the entry\'s bytes do not hash to the leaf the server proved' : 'the computed root differs from the checkpoint\'s'}.`),
      h('dl', { class: 'facts' },
        h('dt', {}, 'Leaf hash'), h('dd', {}, h('code', {}, b64encode(leaf)), ' ', hidden ? badge('given by the server', 'ask') : badge('computed here', 'ok')),
        h('dt', {}, 'Proof'), h('dd', {}, `${proof.hashes.length} sibling hashes`, h('pre', { class: 'source' }, proof.hashes.join('\n'))),
        h('dt', {}, 'Computed root'), h('dd', {}, h('code', { class: 'computed-root' }, root ? b64encode(root) : 'the proof has the wrong length')),
        h('dt', {}, 'Checkpoint root'), h('dd', {}, h('code', {}, cp.rootB64))));
  }

  await loadEntries(null);
}
