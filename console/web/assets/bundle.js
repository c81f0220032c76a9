// An audit bundle made in the page: the same files `rein audit export`
// writes (entries.ndjson, checkpoints.txt, keys.json, manifest.json), in a
// tar archive, so that `rein audit verify DIR --key KEY` checks it offline
// after `tar xf`. Entries before the first index asked for are replaced by
// their leaf hashes, as the CLI does.
import { leafHash, b64encode, parseCheckpoint } from './merkle.js';

const enc = new TextEncoder();

/**
 * splitNotes splits checkpoints as GET /v1/audit/checkpoints sends them
 * (signed notes separated by blank lines; a note has one blank line of its
 * own, between its text and its signatures) into notes, as rein's
 * audit.SplitNotes does.
 */
export function splitNotes(text) {
  const out = [];
  let cur = '';
  let inSigs = false;
  for (const line of text.split(/(?<=\n)/)) {
    const blank = line.replace(/[\r\n]+$/, '') === '';
    if (blank && inSigs) {
      if (cur) out.push(cur);
      cur = '';
      inSigs = false;
      continue;
    }
    if (blank && cur) inSigs = true;
    else if (blank) continue;
    cur += line;
  }
  if (cur.trim()) out.push(cur);
  return out;
}

/** lines splits NDJSON bytes into the bytes of each line (without "\n"). */
export function lines(bytes) {
  const out = [];
  let start = 0;
  for (let i = 0; i < bytes.length; i++) {
    if (bytes[i] === 10) {
      if (i > start) out.push(bytes.subarray(start, i));
      start = i + 1;
    }
  }
  if (start < bytes.length) out.push(bytes.subarray(start));
  return out;
}

function octal(n, width) {
  return n.toString(8).padStart(width - 1, '0') + '\0';
}

/**
 * tar makes a POSIX ustar archive of files ([{name, bytes}], names of at
 * most 100 bytes), each a regular file of mode 0644 dated mtime (seconds).
 */
export function tar(files, mtime = Math.floor(Date.now() / 1000)) {
  const blocks = [];
  for (const f of files) {
    const head = new Uint8Array(512);
    const put = (s, at) => head.set(enc.encode(s), at);
    put(f.name, 0);
    put('0000644\0', 100);
    put('0000000\0', 108);
    put('0000000\0', 116);
    put(octal(f.bytes.length, 12), 124);
    put(octal(mtime, 12), 136);
    put('        ', 148); // the checksum counts itself as spaces
    put('0', 156);
    put('ustar\0', 257);
    put('00', 263);
    const sum = head.reduce((n, b) => n + b, 0);
    put(sum.toString(8).padStart(6, '0') + '\0 ', 148);
    blocks.push(head, f.bytes, new Uint8Array((512 - (f.bytes.length % 512)) % 512));
  }
  blocks.push(new Uint8Array(1024));
  const out = new Uint8Array(blocks.reduce((n, b) => n + b.length, 0));
  let at = 0;
  for (const b of blocks) { out.set(b, at); at += b.length; }
  return out;
}

/**
 * makeBundle builds the bundle's files from what rein sent: the
 * checkpoints text, a function returning the entries' NDJSON bytes from a
 * start index, and the keys. from: the first index shown in full; to: the
 * end asked for (-1: the latest checkpoint), rounded down to a checkpoint.
 */
export async function makeBundle({ checkpoints, entries, keys, from = 0, to = -1, exportedAt = new Date() }) {
  const keep = [];
  let end = 0;
  let origin = '';
  for (const n of splitNotes(checkpoints)) {
    const cp = parseCheckpoint(n);
    if (to >= 0 && cp.size > to) continue;
    keep.push(n);
    end = cp.size;
    origin = cp.origin;
  }
  if (!keep.length) throw new Error('no checkpoint in that range yet');
  const out = [];
  let full = 0;
  let hidden = 0;
  for (let next = 0; next < end;) {
    const page = lines(await entries(next, Math.min(10000, end - next)));
    if (!page.length) throw new Error(`the log ended at ${next}, before its checkpoint at ${end}`);
    for (let line of page) {
      if (next >= end) break;
      const text = new TextDecoder().decode(line);
      let isHidden = text.startsWith('{"index":') && text.includes('"leaf_hash":');
      if (!isHidden && next < from) {
        line = enc.encode(JSON.stringify({ index: next, leaf_hash: b64encode(await leafHash(line)) }));
        isHidden = true;
      }
      if (isHidden) hidden++; else full++;
      out.push(line, Uint8Array.of(10));
      next++;
    }
  }
  const ndjson = new Uint8Array(out.reduce((n, b) => n + b.length, 0));
  let at = 0;
  for (const b of out) { ndjson.set(b, at); at += b.length; }
  const manifest = { origin, from, to: end, full, hidden, checkpoints: keep.length, rein_version: 'console',
    exported_at: exportedAt.toISOString().replace(/\.\d+Z$/, 'Z'), formats: ['native'] };
  return {
    end,
    files: [
      { name: 'entries.ndjson', bytes: ndjson },
      { name: 'checkpoints.txt', bytes: enc.encode(keep.join('\n')) },
      { name: 'keys.json', bytes: enc.encode(JSON.stringify({ keys }, null, 2)) },
      { name: 'manifest.json', bytes: enc.encode(JSON.stringify(manifest, null, 2)) },
    ],
    manifest,
  };
}
