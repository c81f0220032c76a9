// Shared helpers of the console pages. Everything shown is built with DOM
// calls and text nodes: no HTML string ever carries data from the server.

/** h builds an element: h('a', {href, class}, 'text', child, [more]). */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v == null || v === false) continue;
    if (k === 'class') el.className = v;
    else if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else if (k === 'value') el.value = v;
    else if (k === 'checked') el.checked = !!v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  add(el, children);
  return el;
}

function add(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c == null || c === false) continue;
    el.append(c instanceof Node ? c : String(c));
  }
}

/** clear empties an element and fills it with children. */
export function fill(el, ...children) {
  el.replaceChildren();
  add(el, children);
  return el;
}

export class ApiError extends Error {
  // details: what the error's "details" carry (a stale vote's current approval).
  constructor(status, code, message, details) {
    super(message);
    this.status = status;
    this.code = code;
    this.details = details;
  }
}

let mePromise = null;

/** me returns who is signed in ({name, tenant, roles, groups, key_id, csrf, expires_at}). */
export function me() {
  if (!mePromise) {
    mePromise = fetch('/me', { credentials: 'same-origin', cache: 'no-store' }).then(async (r) => {
      if (r.status === 401) {
        toSignIn();
        throw new ApiError(401, 'unauthenticated', 'signed out');
      }
      if (!r.ok) throw new ApiError(r.status, 'unavailable', `GET /me: ${r.status}`);
      return r.json();
    });
  }
  return mePromise;
}

export function toSignIn() {
  location.assign('/sign-in?next=' + encodeURIComponent(location.pathname + location.search));
}

/**
 * api calls the JSON API with the session cookie. State-changing calls carry
 * the session's CSRF token. body: an object (JSON) or a string (YAML).
 * raw: return the Response itself.
 *
 * When the server cannot be reached the call fails with ApiError status 0
 * (code "offline") and the page shows the offline banner; when the session
 * has ended it fails with 401 and the page shows "session ended", keeping
 * whatever was typed (see keepDrafts).
 */
export async function api(method, path, body, { raw = false } = {}) {
  const headers = { Accept: 'application/json' };
  if (method !== 'GET' && method !== 'HEAD') headers['X-Rein-CSRF'] = (await me()).csrf;
  let payload;
  if (body !== undefined) {
    if (typeof body === 'string') {
      payload = body;
      headers['Content-Type'] = 'application/yaml';
    } else {
      payload = JSON.stringify(body);
      headers['Content-Type'] = 'application/json';
    }
  }
  let r;
  try {
    r = await fetch(path, { method, headers, body: payload, credentials: 'same-origin', cache: 'no-store' });
  } catch (_) {
    setOffline(true);
    throw new ApiError(0, 'offline', method === 'GET' ? 'the server cannot be reached' : 'the server cannot be reached: nothing was sent, your vote was not recorded');
  }
  if (r.status === 401) {
    sessionEnded();
    throw new ApiError(401, 'unauthenticated', method === 'GET' ? 'the session has ended; sign in again' : 'the session has ended: your vote was not recorded; sign in again');
  }
  setOffline(false);
  if (!r.ok) {
    let err = {};
    try {
      err = (await r.json()).error || {};
    } catch (_) { /* not JSON */ }
    throw new ApiError(r.status, err.code || String(r.status), err.message || r.statusText, err.details);
  }
  if (raw) return r;
  if (r.status === 204) return null;
  return r.json();
}

// Connection state. While the server cannot be reached, a banner says so,
// every action button is disabled (body.offline), and the page asks /me
// every few seconds until the server answers again.

let offline = false;
let probe = null;
const offlineListeners = [];

/** onOnline registers fn, called when the server answers again after being unreachable. */
export function onOnline(fn) { offlineListeners.push(fn); }

/**
 * restoreButtons enables buttons again after a call that failed, unless
 * the server cannot be reached (they come back with it) or the session has
 * ended (they stay disabled: a vote now would not be recorded).
 */
export function restoreButtons(buttons) {
  for (const b of buttons) {
    b.disabled = offline || ended;
    if (offline && !ended) b.dataset.offlineDisabled = '1';
  }
}

export function setOffline(v) {
  if (v === offline) return;
  offline = v;
  document.body.classList.toggle('offline', v);
  for (const b of document.querySelectorAll('.actions button, .sticky-actions button, .forms button, .answer button')) {
    if (v) { b.dataset.offlineDisabled = b.disabled ? '' : '1'; b.disabled = true; }
    else if (b.dataset.offlineDisabled === '1') { b.disabled = ended; delete b.dataset.offlineDisabled; }
  }
  const banner = document.getElementById('banner');
  if (banner) {
    if (v) {
      fill(banner, h('p', { class: 'notice error', id: 'offline-banner' },
        h('strong', {}, 'Offline: '), 'rein cannot be reached. Nothing you do now is sent; votes are not recorded until the connection is back. Trying again…'));
    } else if (banner.querySelector('#offline-banner')) {
      fill(banner);
    }
  }
  clearInterval(probe);
  if (v) {
    probe = setInterval(async () => {
      const r = await fetch('/me', { credentials: 'same-origin', cache: 'no-store' }).catch(() => null);
      if (!r) return;
      if (r.status === 401) sessionEnded();
      setOffline(false);
    }, 2000);
  } else {
    for (const fn of offlineListeners) fn();
  }
}

addEventListener('offline', () => setOffline(true));

// Drafts: text being typed (a rejection message, an answer) is kept in
// sessionStorage under its data-draft key, so a session that ends, or a page
// reloaded, does not lose it.

const DRAFTS = 'rein.drafts';

export function keepDrafts() {
  const all = readDrafts();
  for (const el of document.querySelectorAll('[data-draft]')) {
    if (el.value) all[el.dataset.draft] = el.value;
  }
  try { sessionStorage.setItem(DRAFTS, JSON.stringify(all)); } catch (_) { /* storage off */ }
}

function readDrafts() {
  try { return JSON.parse(sessionStorage.getItem(DRAFTS) || '{}') || {}; } catch (_) { return {}; }
}

/** draft returns the kept text for key, if any. */
export function draft(key) { return readDrafts()[key] || ''; }

/** dropDraft forgets key's text (it was sent). */
export function dropDraft(key) {
  const all = readDrafts();
  delete all[key];
  try { sessionStorage.setItem(DRAFTS, JSON.stringify(all)); } catch (_) { /* storage off */ }
}

/** trackDraft keeps el's text under key as it is typed, and restores it. */
export function trackDraft(el, key) {
  el.dataset.draft = key;
  if (!el.value) el.value = draft(key);
  el.addEventListener('input', () => keepDrafts());
  return el;
}

let ended = false;

/**
 * sessionEnded keeps what was typed and tells the person, in place, that
 * the session ended, with a link to sign in and come back here; the page is
 * not taken away from under them.
 */
export function sessionEnded() {
  keepDrafts();
  if (ended) return;
  ended = true;
  document.body.classList.add('ended');
  for (const b of document.querySelectorAll('.actions button, .sticky-actions button, .forms button, .answer button')) b.disabled = true;
  const banner = document.getElementById('banner');
  const next = location.pathname + location.search;
  const box = h('div', { class: 'notice error', id: 'session-ended', role: 'alert' },
    h('strong', {}, 'Session ended. '), 'Your vote was not recorded. What you typed is kept: ',
    h('a', { href: '/sign-in?next=' + encodeURIComponent(next), id: 'sign-in-again' }, 'sign in again'), ' to continue here.');
  if (banner) fill(banner, box);
  else toSignIn();
}

/** toast shows a short message at the bottom of the screen. */
export function toast(text, kind = 'ok') {
  const t = document.getElementById('toast');
  if (!t) return;
  t.textContent = text;
  t.className = 'toast ' + kind;
  t.hidden = false;
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => { t.hidden = true; }, kind === 'error' ? 8000 : 3500);
}

/** errorBox renders an API error in place. */
export function errorBox(err) {
  return h('p', { class: 'notice error', role: 'alert' }, err instanceof ApiError ? `${err.status} ${err.code}: ${err.message}` : String(err));
}

// Times.

export function fmtTime(iso) {
  if (!iso) return '';
  const d = new Date(iso);
  return d.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
}

/** fmtShort is the time of day for today's times, else the date and time. */
export function fmtShort(iso) {
  if (!iso) return '';
  const d = new Date(iso);
  const today = new Date().toDateString() === d.toDateString();
  return today ? d.toLocaleTimeString(undefined, { timeStyle: 'medium' }) : d.toLocaleString(undefined, { dateStyle: 'short', timeStyle: 'short' });
}

export function fmtDuration(ms) {
  const neg = ms < 0;
  let s = Math.floor(Math.abs(ms) / 1000);
  const d = Math.floor(s / 86400); s -= d * 86400;
  const hh = Math.floor(s / 3600); s -= hh * 3600;
  const m = Math.floor(s / 60); s -= m * 60;
  let out = d ? `${d}d ${hh}h` : hh ? `${hh}h ${m}m` : m ? `${m}m ${s}s` : `${s}s`;
  return neg ? '-' + out : out;
}

/** ago renders "5m 3s ago", kept current by the ticker. */
export function ago(iso) {
  return h('time', { class: 'ago', datetime: iso, title: fmtTime(iso) }, relative(iso));
}

/** left renders the time left until iso ("3m 10s left"), kept current. */
export function left(iso) {
  return h('time', { class: 'left', datetime: iso, title: fmtTime(iso) }, remaining(iso));
}

function relative(iso) {
  return fmtDuration(Date.now() - new Date(iso).getTime()) + ' ago';
}

function remaining(iso) {
  const ms = new Date(iso).getTime() - Date.now();
  return ms <= 0 ? 'time is up' : fmtDuration(ms) + ' left';
}

setInterval(() => {
  for (const el of document.querySelectorAll('time.ago')) el.textContent = relative(el.getAttribute('datetime'));
  for (const el of document.querySelectorAll('time.left')) {
    el.textContent = remaining(el.getAttribute('datetime'));
    el.classList.toggle('urgent', new Date(el.getAttribute('datetime')).getTime() - Date.now() < 60000);
  }
}, 1000);

// Decisions, risk and statuses.

export function badge(text, kind) {
  return h('span', { class: `badge ${kind || text}` }, text);
}

export function tags(list) {
  return h('span', { class: 'tags' }, (list || []).map((t) => h('span', { class: 'tag' + (/destructive|secret|exfil|taint|money|egress|privileged|private/.test(t) ? ' hot' : '') }, t)));
}

/** link builds an in-console link; the tenant is kept for keys of tenant *. */
export function link(path, text, tenant) {
  return h('a', { href: withTenant(path, tenant) }, text);
}

export function withTenant(path, tenant) {
  if (!tenant || !isAllTenants()) return path;
  return path + (path.includes('?') ? '&' : '?') + 'tenant=' + encodeURIComponent(tenant);
}

let allTenants = false;
export function setAllTenants(v) { allTenants = v; }
export function isAllTenants() { return allTenants; }

/** pageTenant is the ?tenant= of the page (keys of tenant * pick one). */
export function pageTenant() {
  return new URLSearchParams(location.search).get('tenant') || '';
}

/** tq appends the page's tenant to an API path. */
export function tq(path) {
  const t = pageTenant();
  if (!t) return path;
  return path + (path.includes('?') ? '&' : '?') + 'tenant=' + encodeURIComponent(t);
}

// JSON.

/** sortKeys returns v with object keys sorted, for stable display and diffs. */
export function sortKeys(v) {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v && typeof v === 'object') {
    const out = {};
    for (const k of Object.keys(v).sort()) out[k] = sortKeys(v[k]);
    return out;
  }
  return v;
}

export function pretty(v) {
  return JSON.stringify(sortKeys(v), null, 2);
}

/**
 * jsonView renders a value as indented JSON. Nothing is folded: what will
 * run is shown whole, and a string spanning lines (a script, a query) is
 * shown as its lines. marks ([{text, kind, title}]) highlight the parts
 * rein's analysis found (a command that changes things, a write target, a
 * private host, a statement that writes) wherever they occur in a string.
 */
export function jsonView(v, marks = []) {
  const pre = h('pre', { class: 'json' });
  render(pre, sortKeys(v), '', marks);
  return pre;
}

function render(out, v, indent, marks) {
  if (Array.isArray(v)) {
    if (!v.length) return out.append('[]');
    out.append('[\n');
    v.forEach((x, i) => {
      out.append(indent + '  ');
      render(out, x, indent + '  ', marks);
      out.append(i < v.length - 1 ? ',\n' : '\n');
    });
    out.append(indent + ']');
  } else if (v && typeof v === 'object') {
    const keys = Object.keys(v);
    if (!keys.length) return out.append('{}');
    out.append('{\n');
    keys.forEach((k, i) => {
      out.append(indent + '  ', h('span', { class: 'k' }, JSON.stringify(k)), ': ');
      render(out, v[k], indent + '  ', marks);
      out.append(i < keys.length - 1 ? ',\n' : '\n');
    });
    out.append(indent + '}');
  } else if (typeof v === 'string') {
    if (v.includes('\n')) {
      const lines = v.split('\n');
      out.append(h('span', { class: 'muted' }, `(${lines.length} lines)`),
        h('span', { class: 's script' }, highlight(v, marks)));
    } else {
      out.append(h('span', { class: 's' }, highlight(JSON.stringify(v), marks)));
    }
  } else {
    out.append(h('span', { class: v === null ? 'null' : typeof v === 'number' ? 'n' : 'b' }, JSON.stringify(v)));
  }
}

/**
 * findMarks returns the non-overlapping ranges of text that marks name,
 * earliest first (longer marks win at the same place). A mark whose text is
 * a word is matched as a whole word only.
 */
export function findMarks(text, marks) {
  const found = [];
  for (const m of marks) {
    if (!m.text) continue;
    const word = /^[\w.-]+$/.test(m.text);
    let at = 0;
    for (;;) {
      const i = text.indexOf(m.text, at);
      if (i < 0) break;
      at = i + 1;
      const before = text[i - 1];
      const after = text[i + m.text.length];
      if (word && ((before && /[\w.\/-]/.test(before)) || (after && /[\w-]/.test(after)))) continue;
      found.push({ start: i, end: i + m.text.length, mark: m });
    }
  }
  found.sort((a, b) => a.start - b.start || b.end - a.end);
  const out = [];
  let last = 0;
  for (const f of found) {
    if (f.start < last) continue;
    out.push(f);
    last = f.end;
  }
  return out;
}

function highlight(text, marks) {
  if (!marks.length) return text;
  const parts = [];
  let at = 0;
  for (const f of findMarks(text, marks)) {
    if (f.start > at) parts.push(text.slice(at, f.start));
    parts.push(h('mark', { class: 'fact ' + f.mark.kind, title: f.mark.title }, text.slice(f.start, f.end)));
    at = f.end;
  }
  parts.push(text.slice(at));
  return parts;
}

/**
 * marksFromFacts turns a check's facts (risk.md) into the parts of its
 * arguments to highlight. It adds nothing rein's analysis did not find.
 */
export function marksFromFacts(facts) {
  const marks = [];
  if (!facts) return marks;
  const shell = facts.shell || {};
  for (const c of shell.commands || []) {
    if (c.name && !c.read_only) marks.push({ text: c.name, kind: 'cmd', title: `runs ${c.name}: not known to be read-only` });
    for (const w of c.writes || []) marks.push({ text: w, kind: 'write', title: `${c.name || 'the command'} writes ${w}` });
  }
  for (const w of shell.writes || []) marks.push({ text: w, kind: 'write', title: `the script writes ${w}` });
  for (const u of [...(facts.urls || []), ...(shell.urls || [])]) {
    if (u.private && u.host) marks.push({ text: u.host, kind: 'host', title: `private or internal host ${u.host}` });
  }
  for (const p of facts.paths || []) {
    if (p.sensitive || p.outside_workspace) marks.push({ text: p.path, kind: 'path', title: p.sensitive ? `sensitive path ${p.clean || p.path}` : `outside the workspace: ${p.clean || p.path}` });
  }
  const stmts = [...((facts.sql || {}).statements || []), ...(shell.sql || [])];
  for (const st of stmts) {
    const verb = String(st.verb || '').toUpperCase();
    if (verb && verb !== 'SELECT') {
      marks.push({ text: verb, kind: 'sql', title: `${verb}${(st.tables || []).length ? ' on ' + st.tables.join(', ') : ''}${st.has_where === false && (verb === 'DELETE' || verb === 'UPDATE') ? ' without WHERE' : ''}` });
      marks.push({ text: verb.toLowerCase(), kind: 'sql', title: verb });
    }
  }
  return marks;
}

/** approverWords says a selector in words: "group oncall", "role approver". */
export function approverWords(sel) {
  if (sel === 'client') return "the MCP client's user";
  const [kind, name] = String(sel).split(/:(.*)/s);
  if (!name) return sel;
  if (kind === 'user') return name;
  return `${kind} ${name}`;
}

/** announce tells screen readers something new (a polite live region). */
export function announce(text) {
  const el = document.getElementById('announce');
  if (!el) return;
  el.textContent = '';
  setTimeout(() => { el.textContent = text; }, 50);
}

// Single-key shortcuts can be turned off (WCAG 2.1.4); the choice is kept
// in this browser.

export function shortcutsOn() {
  try { return localStorage.getItem('rein.shortcuts') !== 'off'; } catch (_) { return true; }
}

export function setShortcuts(on) {
  try { localStorage.setItem('rein.shortcuts', on ? 'on' : 'off'); } catch (_) { /* storage off */ }
}

/**
 * diffLines compares two texts line by line (longest common subsequence)
 * and returns [{op: ' '|'-'|'+', line}].
 */
export function diffLines(a, b) {
  const x = a.split('\n');
  const y = b.split('\n');
  if (x.length * y.length > 4e6) {
    return [...x.map((line) => ({ op: '-', line })), ...y.map((line) => ({ op: '+', line }))];
  }
  const n = x.length;
  const m = y.length;
  const L = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      L[i][j] = x[i] === y[j] ? L[i + 1][j + 1] + 1 : Math.max(L[i + 1][j], L[i][j + 1]);
    }
  }
  const out = [];
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (x[i] === y[j]) { out.push({ op: ' ', line: x[i] }); i++; j++; }
    else if (L[i + 1][j] >= L[i][j + 1]) out.push({ op: '-', line: x[i++] });
    else out.push({ op: '+', line: y[j++] });
  }
  while (i < n) out.push({ op: '-', line: x[i++] });
  while (j < m) out.push({ op: '+', line: y[j++] });
  return out;
}

export function diffView(a, b) {
  const rows = diffLines(a, b);
  const changed = rows.some((r) => r.op !== ' ');
  return h('pre', { class: 'diff' + (changed ? '' : ' same') },
    rows.map((r) => h('span', { class: r.op === '+' ? 'add' : r.op === '-' ? 'del' : 'ctx' }, r.op + ' ' + r.line + '\n')));
}

/**
 * live subscribes to the event stream (SSE, with the session cookie) and
 * calls onEvent(type, data) for the given types. onState gets 'live' or
 * 'reconnecting'. Each time the stream opens, the first time included,
 * onEvent('opened', null) lets the page load what changed before the
 * stream began: rein sends only the events after the moment the stream
 * opened, so a page loaded before that moment may have missed some. A
 * stream the server refused (the session ended: back to sign-in; anything
 * else: try again in a few seconds) is opened anew, since browsers give up
 * on those.
 */
export function live(types, onEvent, onState) {
  const open = () => {
    const es = new EventSource('/v1/events?types=' + types.join(','));
    es.onopen = () => {
      onState && onState('live');
      onEvent('opened', null);
    };
    es.onerror = async () => {
      onState && onState('reconnecting');
      if (es.readyState !== EventSource.CLOSED) return; // the browser retries by itself
      const r = await fetch('/me', { credentials: 'same-origin', cache: 'no-store' }).catch(() => null);
      if (r && r.status === 401) sessionEnded();
      else setTimeout(open, 3000);
    };
    for (const t of types) {
      es.addEventListener(t, (e) => {
        let data = null;
        try { data = JSON.parse(e.data); } catch (_) { /* keep null */ }
        onEvent(t, data);
      });
    }
  };
  open();
}

/**
 * serial runs the async load fn one run at a time. A call while a run is
 * under way asks for one more run after it (calls meanwhile share that
 * run), so every call is answered by a run that started after it, runs
 * apply their answers in the order they started (an older answer never
 * overwrites a newer one), and a busy event stream cannot keep a page
 * from ever showing an answer. The returned promise settles with the run
 * that answers the call.
 */
export function serial(fn) {
  let running = null; // the run under way
  let next = null; // the run asked for while one was under way
  const run = () => {
    if (!running) {
      running = (async () => {
        try {
          return await fn();
        } finally {
          running = null;
        }
      })();
      return running;
    }
    if (!next) next = running.catch(() => {}).then(() => { next = null; return run(); });
    return next;
  };
  return run;
}

/**
 * ruleAndReason shows a decision's rule and reason; rein's stand-in for a
 * rule without a reason ("matched rule X") is said as what it is.
 */
export function ruleAndReason(rule, reason) {
  if (rule && (!reason || reason === 'matched rule ' + rule)) {
    return [h('code', {}, rule), ' ', h('span', { class: 'muted' }, 'the policy gives no reason for this rule')];
  }
  return [rule ? [h('code', {}, rule), ' '] : null, reason];
}

/** debounce runs fn once, delay ms after the last call. */
export function debounce(fn, delay) {
  let t;
  return (...args) => {
    clearTimeout(t);
    t = setTimeout(() => fn(...args), delay);
  };
}

export function hasRole(who, ...roles) {
  return roles.some((r) => who.roles.includes(r));
}
