// Audit: the latest signed checkpoint (signature checked here), the latest
// entries, and for any entry its inclusion proof, recomputed in the page
// with WebCrypto SHA-256 up to the checkpoint's root hash.
import { h, fill, api, errorBox, fmtTime, fmtShort, badge } from '../lib.js';
import { parseCheckpoint, verifySignature, leafHash, rootFromInclusion, b64decode, b64encode, equal } from '../merkle.js';

const PAGE = 50;

export async function render(main) {
  const cpBox = h('section', { class: 'panel', id: 'checkpoint' }, h('h2', {}, 'Latest checkpoint'), h('p', { class: 'muted' }, 'Loading…'));
  const tbody = h('tbody', { id: 'entries' });
  const jump = h('input', { id: 'jump', type: 'number', min: 0, placeholder: 'index', 'aria-label': 'First index to show' });
  const err = h('div');
  fill(main, h('div', { class: 'page-head' }, h('h1', {}, 'Audit log')), err, cpBox,
    h('section', { class: 'panel' }, h('h2', {}, 'Entries'),
      h('form', { class: 'row', onsubmit: (e) => { e.preventDefault(); if (jump.value !== '') loadEntries(Number(jump.value)); } },
        h('label', { for: 'jump' }, 'Show from index'), jump, h('button', { type: 'submit' }, 'Show'),
        h('button', { type: 'button', onclick: () => loadEntries(null) }, 'Latest')),
      h('table', { class: 'list' }, h('thead', {}, h('tr', {}, ['#', 'Time', 'Kind', 'Tenant', 'Actor', 'Subject', ''].map((t) => h('th', {}, t)))), tbody)));

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
    } catch (e) {
      fill(sigLine, h('span', { class: 'muted' }, 'not checked here: ' + e.message));
    }
  } catch (e) {
    fill(cpBox, h('h2', {}, 'Latest checkpoint'), errorBox(e));
  }

  async function loadEntries(from) {
    const start = from ?? Math.max(0, (cp ? cp.size : 0) - PAGE + 5);
    try {
      const r = await api('GET', `/v1/audit/entries?start=${start}&limit=${PAGE}`, undefined, { raw: true });
      const bytes = new Uint8Array(await r.arrayBuffer());
      const lines = [];
      let s = 0;
      for (let i = 0; i < bytes.length; i++) {
        if (bytes[i] === 10) { lines.push(bytes.slice(s, i)); s = i + 1; }
      }
      const dec = new TextDecoder();
      const rows = lines.map((b) => ({ bytes: b, e: JSON.parse(dec.decode(b)) })).reverse();
      fill(tbody, rows.length ? rows.map(row) : h('tr', {}, h('td', { colspan: 7, class: 'muted' }, 'No entries here.')));
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
    const tr = h('tr', { dataset: { index: e.index } },
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
