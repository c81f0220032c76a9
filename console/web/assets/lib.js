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
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
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
  const r = await fetch(path, { method, headers, body: payload, credentials: 'same-origin', cache: 'no-store' });
  if (r.status === 401) {
    toSignIn();
    throw new ApiError(401, 'unauthenticated', 'the session has ended; sign in again');
  }
  if (!r.ok) {
    let err = {};
    try {
      err = (await r.json()).error || {};
    } catch (_) { /* not JSON */ }
    throw new ApiError(r.status, err.code || String(r.status), err.message || r.statusText);
  }
  if (raw) return r;
  if (r.status === 204) return null;
  return r.json();
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
  return h('span', { class: 'tags' }, (list || []).map((t) => h('span', { class: 'tag' + (/destructive|secret|exfil|taint/.test(t) ? ' hot' : '') }, t)));
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

const FOLD = 120;

/**
 * jsonView renders a value as indented JSON. Strings longer than 120
 * characters or spanning lines are folded: the start shows, a click shows all.
 */
export function jsonView(v) {
  const pre = h('pre', { class: 'json' });
  render(pre, sortKeys(v), '');
  return pre;
}

function render(out, v, indent) {
  if (Array.isArray(v)) {
    if (!v.length) return out.append('[]');
    out.append('[\n');
    v.forEach((x, i) => {
      out.append(indent + '  ');
      render(out, x, indent + '  ');
      out.append(i < v.length - 1 ? ',\n' : '\n');
    });
    out.append(indent + ']');
  } else if (v && typeof v === 'object') {
    const keys = Object.keys(v);
    if (!keys.length) return out.append('{}');
    out.append('{\n');
    keys.forEach((k, i) => {
      out.append(indent + '  ', h('span', { class: 'k' }, JSON.stringify(k)), ': ');
      render(out, v[k], indent + '  ');
      out.append(i < keys.length - 1 ? ',\n' : '\n');
    });
    out.append(indent + '}');
  } else if (typeof v === 'string') {
    const s = JSON.stringify(v);
    if (s.length > FOLD || v.includes('\n')) {
      const d = h('details', { class: 'fold' },
        h('summary', {}, h('span', { class: 's' }, s.slice(0, 60) + '…'), h('span', { class: 'muted' }, ` (${v.length} chars, show all)`)),
        h('span', { class: 's full' }, v.includes('\n') ? v : s));
      out.append(d);
    } else {
      out.append(h('span', { class: 's' }, s));
    }
  } else {
    out.append(h('span', { class: v === null ? 'null' : typeof v === 'number' ? 'n' : 'b' }, JSON.stringify(v)));
  }
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
 * 'reconnecting'; after a reconnect, onEvent('reconnected') lets the page
 * reload what it may have missed. A stream the server refused (the session
 * ended: back to sign-in; anything else: try again in a few seconds) is
 * opened anew, since browsers give up on those.
 */
export function live(types, onEvent, onState) {
  let wasDown = false;
  const open = () => {
    const es = new EventSource('/v1/events?types=' + types.join(','));
    es.onopen = () => {
      onState && onState('live');
      if (wasDown) onEvent('reconnected', null);
      wasDown = false;
    };
    es.onerror = async () => {
      wasDown = true;
      onState && onState('reconnecting');
      if (es.readyState !== EventSource.CLOSED) return; // the browser retries by itself
      const r = await fetch('/me', { credentials: 'same-origin', cache: 'no-store' }).catch(() => null);
      if (r && r.status === 401) toSignIn();
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
