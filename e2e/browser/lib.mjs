// Helpers for the console's browser tests. The Go test (e2e/console/console_test.go)
// starts rein and this script; the script drives Debian's Chromium with
// playwright-core. When it needs something done outside the browser (an
// agent's check, a question), it prints "@step NAME ARG" and waits for the
// Go test's one-line answer on stdin.
import { chromium } from 'playwright-core';
import { createInterface } from 'node:readline';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const env = process.env;
export const base = env.REIN_URL;

const lines = createInterface({ input: process.stdin });
const waiting = [];
const queued = [];
lines.on('line', (l) => {
  const w = waiting.shift();
  if (w) w(l);
  else queued.push(l);
});

/** step asks the Go test to do something and returns its answer. */
export function step(name, arg = '') {
  process.stdout.write(`@step ${name} ${arg}\n`);
  return new Promise((resolve) => {
    const l = queued.shift();
    if (l !== undefined) resolve(l);
    else waiting.push(resolve);
  });
}

export function log(...args) {
  console.log(...args);
}

export class Failure extends Error {}

export function assert(cond, what) {
  if (!cond) throw new Failure('assertion failed: ' + what);
}

export function eq(got, want, what) {
  if (JSON.stringify(got) !== JSON.stringify(want)) {
    throw new Failure(`${what}: got ${JSON.stringify(got)}, want ${JSON.stringify(want)}`);
  }
}

/**
 * launch starts headless Chromium with a fresh profile and connects to it
 * over the DevTools protocol (playwright-core drives it; Chromium is
 * Debian's, started here with exactly these flags).
 */
export async function launch() {
  const profile = mkdtempSync(join(tmpdir(), 'rein-chromium-'));
  const proc = spawn(env.CHROMIUM, ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage',
    `--user-data-dir=${profile}`, '--remote-debugging-port=0', 'about:blank'], { stdio: ['ignore', 'ignore', 'pipe'], detached: true });
  const ws = await new Promise((resolve, reject) => {
    let err = '';
    const timer = setTimeout(() => reject(new Error('chromium printed no DevTools address within 20s:\n' + err)), 20000);
    proc.stderr.on('data', (d) => {
      err += d;
      const m = err.match(/DevTools listening on (ws:\/\/\S+)/);
      if (m) { clearTimeout(timer); resolve(m[1]); }
    });
    proc.on('exit', (code) => { clearTimeout(timer); reject(new Error(`chromium exited (${code}):\n${err}`)); });
  });
  const browser = await chromium.connectOverCDP(ws);
  const close = async () => {
    // Ask Chromium to quit, then end its whole process group (helpers
    // included) before removing the profile they write to.
    const exited = new Promise((r) => (proc.exitCode !== null ? r() : proc.on('exit', r)));
    await browser.newBrowserCDPSession().then((s) => s.send('Browser.close')).catch(() => {});
    await Promise.race([exited, new Promise((r) => setTimeout(r, 3000))]);
    try { process.kill(-proc.pid, 'SIGKILL'); } catch (_) { /* gone already */ }
    await exited;
    await new Promise((r) => setTimeout(r, 100));
    try {
      rmSync(profile, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
    } catch (e) {
      console.log(`could not remove the browser profile ${profile}: ${e.message}`);
    }
  };
  return { browser, close };
}

/** newPage opens a page in a fresh context (its own cookies), failing on page errors. */
export async function newPage(browser, { mobile = false } = {}) {
  const ctx = await browser.newContext(mobile
    ? { viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true }
    : { viewport: { width: 1280, height: 900 } });
  ctx.setDefaultTimeout(10000);
  const page = await ctx.newPage();
  page.errors = [];
  page.on('pageerror', (e) => page.errors.push(String(e)));
  page.on('console', (m) => {
    if (m.type() === 'error' && !/status of 40[1349]/.test(m.text())) page.errors.push('console: ' + m.text());
  });
  return page;
}

/** signIn signs in with key from the sign-in page. */
export async function signIn(page, key, next = '/inbox') {
  await page.goto(base + '/sign-in?next=' + encodeURIComponent(next));
  await page.fill('#key', key);
  await Promise.all([page.waitForNavigation(), page.click('button[type=submit]')]);
}

/**
 * hold presses the mouse on loc for ms, then lets go: how "Hold to approve"
 * (destructive or money-moving approvals) is pressed.
 */
export async function hold(page, loc, ms = 1500) {
  await loc.scrollIntoViewIfNeeded();
  const b = await loc.boundingBox();
  await page.mouse.move(b.x + b.width / 2, b.y + b.height / 2);
  await page.mouse.down();
  await page.waitForTimeout(ms);
  await page.mouse.up();
}

/** shot saves a screenshot into SCREENSHOT_DIR. */
export async function shot(page, name, opts = {}) {
  const path = join(env.SCREENSHOT_DIR, name + '.png');
  await page.screenshot({ path, ...opts });
  log('screenshot', path);
}

/** run runs the test body, closing the browser and exiting non-zero on failure. */
export async function run(body) {
  const { browser, close } = await launch();
  let code = 0;
  try {
    await body(browser);
  } catch (e) {
    console.error(e instanceof Failure ? e.message : e.stack || String(e));
    code = 1;
    // What each open page showed, to tell why.
    for (const ctx of browser.contexts()) {
      for (const p of ctx.pages()) {
        const text = await p.locator('body').innerText({ timeout: 1000 }).catch(() => '');
        console.error(`--- page ${p.url()}\n${text.slice(0, 3000)}\nerrors: ${JSON.stringify(p.errors || [])}`);
      }
    }
  } finally {
    await close();
    lines.close();
  }
  process.exit(code);
}

const axeSource = readFileSync(fileURLToPath(new URL('./node_modules/axe-core/axe.min.js', import.meta.url)), 'utf8');

/**
 * axe runs axe-core in the page (evaluated over the DevTools protocol, so
 * the console's strict CSP stays on) and returns its serious and critical
 * violations as short strings.
 */
export async function axe(page) {
  if (!(await page.evaluate(() => typeof window.axe === 'object'))) await page.evaluate(axeSource);
  const res = await within(60000, `axe on ${page.url()}`, page.evaluate(async () => {
    const r = await window.axe.run(document, { resultTypes: ['violations'] });
    return r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => `${v.id} (${v.impact}): ${v.help} — ${v.nodes.slice(0, 4).map((n) => n.target.join(' ') + (n.failureSummary ? ' [' + n.failureSummary.replace(/\s+/g, ' ').slice(0, 160) + ']' : '')).join('; ')}`);
  }));
  return res;
}

/**
 * within returns promise's result, or fails naming what when promise has
 * not settled after ms (page.evaluate has no timeout of its own: a page
 * that never answers would otherwise hold the script until the Go test
 * kills it, saying nothing of where).
 */
export function within(ms, what, promise) {
  let timer;
  const late = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Failure(`${what} did not finish in ${ms / 1000} s`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/** overflow is how many pixels the page is wider than the screen. */
export function overflow(page) {
  return page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
}

/**
 * smallTargets lists the visible tap targets (links, buttons, form fields)
 * smaller than min px in height or width. Links inside running text are
 * exempt, as WCAG 2.5.8 exempts them.
 */
export function smallTargets(page, min = 44) {
  return page.evaluate((min) => {
    const out = [];
    for (const el of document.querySelectorAll('a[href], button, input:not([type=hidden]), select, textarea, summary, [tabindex="0"]')) {
      const r = el.getBoundingClientRect();
      if (!r.width || !r.height || getComputedStyle(el).visibility === 'hidden') continue;
      if (el.tagName === 'A' && el.closest('p, li, dd, td, .notice') && !el.closest('nav, .meta')) continue;
      if (el.matches('tr')) continue;
      if (r.height < min - 0.5 || r.width < min - 0.5) out.push(`${el.tagName.toLowerCase()}${el.id ? '#' + el.id : ''}${el.className ? '.' + String(el.className).split(' ').join('.') : ''} "${(el.textContent || el.value || '').trim().slice(0, 20)}" ${Math.round(r.width)}x${Math.round(r.height)}`);
    }
    return out;
  }, min);
}
