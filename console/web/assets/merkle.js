// RFC 6962 / RFC 9162 Merkle tree hashing and inclusion proofs, and C2SP
// signed-note checkpoints, checked in the browser with WebCrypto: the page
// trusts the server for nothing but bytes.

const enc = new TextEncoder();

export async function sha256(...parts) {
  const len = parts.reduce((n, p) => n + p.length, 0);
  const buf = new Uint8Array(len);
  let off = 0;
  for (const p of parts) { buf.set(p, off); off += p.length; }
  return new Uint8Array(await crypto.subtle.digest('SHA-256', buf));
}

/** leafHash is SHA-256(0x00 || entry bytes). */
export function leafHash(bytes) {
  return sha256(Uint8Array.of(0), bytes);
}

/** nodeHash is SHA-256(0x01 || left || right). */
export function nodeHash(left, right) {
  return sha256(Uint8Array.of(1), left, right);
}

export function b64decode(s) {
  const bin = atob(s);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

export function b64encode(b) {
  let s = '';
  for (const x of b) s += String.fromCharCode(x);
  return btoa(s);
}

export function equal(a, b) {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/**
 * rootFromInclusion computes the root of a tree of size from a leaf at
 * index and its inclusion proof (RFC 9162, section 2.1.3.2). It returns
 * null when the proof has the wrong shape.
 */
export async function rootFromInclusion(index, size, leaf, proof) {
  if (index < 0 || index >= size) return null;
  let fn = BigInt(index);
  let sn = BigInt(size - 1);
  let r = leaf;
  for (const p of proof) {
    if (sn === 0n) return null;
    if ((fn & 1n) === 1n || fn === sn) {
      r = await nodeHash(p, r);
      while ((fn & 1n) === 0n && fn !== 0n) { fn >>= 1n; sn >>= 1n; }
    } else {
      r = await nodeHash(r, p);
    }
    fn >>= 1n;
    sn >>= 1n;
  }
  return sn === 0n ? r : null;
}

/**
 * verifyConsistency checks that a tree of size first with root firstRoot is
 * a prefix of the tree of size second with root secondRoot, from the
 * consistency proof (RFC 9162, section 2.1.4.2): the log only grew, nothing
 * in the older tree changed.
 */
export async function verifyConsistency(first, second, firstRoot, secondRoot, proof) {
  if (first < 1 || first > second) return false;
  if (first === second) return proof.length === 0 && equal(firstRoot, secondRoot);
  if (!proof.length) return false;
  let path = proof;
  if ((first & (first - 1)) === 0) path = [firstRoot, ...proof]; // first is a power of two
  let fn = BigInt(first - 1);
  let sn = BigInt(second - 1);
  while ((fn & 1n) === 1n) { fn >>= 1n; sn >>= 1n; }
  let fr = path[0];
  let sr = path[0];
  for (const c of path.slice(1)) {
    if (sn === 0n) return false;
    if ((fn & 1n) === 1n || fn === sn) {
      fr = await nodeHash(c, fr);
      sr = await nodeHash(c, sr);
      while ((fn & 1n) === 0n && fn !== 0n) { fn >>= 1n; sn >>= 1n; }
    } else {
      sr = await nodeHash(sr, c);
    }
    fn >>= 1n;
    sn >>= 1n;
  }
  return sn === 0n && equal(fr, firstRoot) && equal(sr, secondRoot);
}

/** parseCheckpoint reads a signed note: origin, size, root hash, signatures. */
export function parseCheckpoint(noteText) {
  const cut = noteText.indexOf('\n\n');
  if (cut < 0) throw new Error('not a signed note: no blank line before the signatures');
  const text = noteText.slice(0, cut + 1);
  const [origin, size, root] = text.trimEnd().split('\n');
  const sigs = noteText.slice(cut + 2).split('\n').filter((l) => l.startsWith('\u2014 ')).map((l) => {
    const [, name, sig] = l.split(' ');
    return { name, sig };
  });
  if (!/^\d+$/.test(size || '')) throw new Error('checkpoint size is not a number');
  return { origin, size: Number(size), root: b64decode(root), rootB64: root, text, sigs };
}

/**
 * verifySignature checks a checkpoint's signatures against note verifier
 * keys ("name+hash+base64(0x01 || Ed25519 public key)"). It returns the
 * verifier that signed, or null; it throws when the browser has no Ed25519.
 */
export async function verifySignature(cp, verifiers) {
  for (const v of verifiers) {
    // name+hash+key: the base64 key may itself hold '+'.
    const i = v.indexOf('+');
    const j = v.indexOf('+', i + 1);
    if (i < 0 || j < 0) continue;
    const [name, hashHex, keyB64] = [v.slice(0, i), v.slice(i + 1, j), v.slice(j + 1)];
    const key = b64decode(keyB64);
    if (key[0] !== 1 || key.length !== 33) continue;
    for (const s of cp.sigs) {
      if (s.name !== name) continue;
      const sig = b64decode(s.sig);
      const keyHash = Array.from(sig.slice(0, 4), (x) => x.toString(16).padStart(2, '0')).join('');
      if (keyHash !== hashHex) continue;
      const pub = await crypto.subtle.importKey('raw', key.slice(1), { name: 'Ed25519' }, false, ['verify']);
      if (await crypto.subtle.verify({ name: 'Ed25519' }, pub, sig.slice(4), enc.encode(cp.text))) return v;
    }
  }
  return null;
}
