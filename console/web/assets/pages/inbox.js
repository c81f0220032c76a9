// Inbox: pending approvals and questions, the least time left first, kept
// current by the event stream; the page title carries how many wait. Keys
// (which can be turned off): j/k move, a approves, r rejects, e edits, o opens.
import { h, fill, api, live, debounce, serial, errorBox, announce, shortcutsOn, setShortcuts, onOnline } from '../lib.js';
import { approvalCard, questionCard, turnsOf, turnPanel, turnKey } from '../cards.js';

export async function render(main, { who }) {
  const state = h('span', { class: 'live-state', id: 'live-state' }, 'connecting…');
  const list = h('div', { class: 'inbox', id: 'inbox' });
  const turns = h('div', { class: 'turns', id: 'turns' }); // agent turns decided at once
  const empty = h('p', { class: 'empty muted', id: 'inbox-empty', hidden: true }, 'Nothing is waiting for you. New approvals and questions appear here as they come.');
  const err = h('div');
  const toggle = h('input', { type: 'checkbox', id: 'shortcuts-on', checked: shortcutsOn() });
  const keysText = h('span', { class: 'keys-text' }, ': ', h('kbd', {}, 'j'), '/', h('kbd', {}, 'k'), ' move, ', h('kbd', {}, 'a'), ' approve, ',
    h('kbd', {}, 'r'), ' reject, ', h('kbd', {}, 'e'), ' edit, ', h('kbd', {}, 'o'), ' open');
  keysText.hidden = !shortcutsOn();
  toggle.addEventListener('change', () => { setShortcuts(toggle.checked); keysText.hidden = !toggle.checked; });
  // Compact: the action, its risk, why, the quorum and the buttons; the
  // intent and the session's recent actions stay on the approval's page.
  let compactOn = false;
  try { compactOn = localStorage.getItem('rein.compact') === 'on'; } catch (_) { /* storage off */ }
  const compact = h('input', { type: 'checkbox', id: 'compact', checked: compactOn });
  compact.addEventListener('change', () => {
    list.classList.toggle('compact', compact.checked);
    try { localStorage.setItem('rein.compact', compact.checked ? 'on' : 'off'); } catch (_) { /* storage off */ }
  });
  list.classList.toggle('compact', compactOn);
  const help = h('div', { class: 'shortcuts muted' }, h('label', { class: 'inline-label', for: 'compact' }, compact, 'Compact'),
    h('label', { class: 'inline-label', for: 'shortcuts-on' }, toggle, 'Single-key shortcuts'), keysText);
  fill(main, h('div', { class: 'page-head' }, h('h1', {}, 'Inbox'), state), help, err, empty, turns, list);
  const baseTitle = document.title;
  let known = null; // ids seen so far, to announce the new ones

  const cards = new Map(); // id -> card
  let selected = null;

  function select(id) {
    if (selected && cards.get(selected)) cards.get(selected).el.classList.remove('selected');
    selected = id && cards.has(id) ? id : null;
    if (selected) {
      const el = cards.get(selected).el;
      el.classList.add('selected');
      el.scrollIntoView({ block: 'nearest', behavior: 'smooth' });
    }
  }

  function order() {
    return [...list.children].map((el) => el.dataset.id);
  }

  // A load answers as of when it started: an item that left after that
  // (decided here, its time up) is not brought back by its answer.
  let tick = 0;
  const gone = new Map(); // id -> tick when it left

  function remove(id) {
    const c = cards.get(id);
    if (!c) return;
    gone.set(id, ++tick);
    const ids = order();
    const i = ids.indexOf(id);
    c.el.classList.add('leaving');
    setTimeout(() => c.el.remove(), 600);
    cards.delete(id);
    document.title = (cards.size ? `(${cards.size}) ` : '') + baseTitle;
    if (selected === id) select(ids[i + 1] || ids[i - 1] || null);
    setTimeout(() => { empty.hidden = cards.size > 0; }, 650);
  }

  // One load at a time (see serial): were two under way, the older answer
  // could arrive last and take away an approval the newer one had shown.
  async function load() {
    const started = ++tick;
    try {
      const [approvals, questions] = await Promise.all([
        api('GET', '/v1/approvals?status=pending&limit=200'),
        api('GET', '/v1/questions?status=pending&limit=200'),
      ]);
      fill(err);
      // Items whose time is up take no more votes or answers: they leave.
      const now = Date.now();
      const listed = new Set([...approvals, ...questions].map((x) => x.id));
      for (const [id, at] of gone) if (at < started && !listed.has(id)) gone.delete(id); // rein agrees: forget it
      const items = [
        ...approvals.map((a) => ({ kind: 'approval', x: a })),
        ...questions.map((q) => ({ kind: 'question', x: q })),
      ].filter((i) => Date.parse(i.x.expires_at) > now && !((gone.get(i.x.id) || 0) > started)).sort((p, q) => (p.x.expires_at < q.x.expires_at ? -1 : p.x.expires_at > q.x.expires_at ? 1 : p.x.id < q.x.id ? -1 : 1));
      document.title = (items.length ? `(${items.length}) ` : '') + baseTitle;
      if (known) {
        const fresh = items.filter((i) => !known.has(i.x.id));
        if (fresh.length === 1) {
          const x = fresh[0].x;
          announce(fresh[0].kind === 'approval' ? `New approval: ${x.agent} asks to run ${x.tool}. ${items.length} waiting.` : `New question from ${x.agent}. ${items.length} waiting.`);
        } else if (fresh.length > 1) {
          announce(`${fresh.length} new items. ${items.length} waiting.`);
        }
      }
      known = new Set(items.map((i) => i.x.id));
      const keep = new Set(items.map((i) => i.x.id));
      for (const id of [...cards.keys()]) if (!keep.has(id)) remove(id);
      let prev = null;
      for (const { kind, x } of items) {
        let c = cards.get(x.id);
        if (c) {
          c.update(x);
        } else {
          const opts = { who, onResolved: () => remove(x.id) };
          c = kind === 'approval' ? approvalCard(x, opts) : questionCard(x, opts);
          c.el.classList.add('arriving');
          cards.set(x.id, c);
        }
        // Move a card only when it is out of place: moving would take the
        // focus from a message being typed.
        if (prev) { if (prev.nextElementSibling !== c.el) prev.after(c.el); } else if (list.firstElementChild !== c.el) list.prepend(c.el);
        prev = c.el;
      }
      empty.hidden = cards.size > 0;
      if (!selected && items.length) select(items[0].x.id);
      // A turn's panel stays while its approvals stay the same, each in
      // the same version (a message being typed is kept); a changed turn
      // gets a new panel, which says that it changed.
      const panels = new Map([...turns.children].map((el) => [el.dataset.key, el]));
      const batches = new Set([...turns.children].map((el) => el.dataset.batchKey));
      const want = [];
      for (const group of turnsOf(items.filter((i) => i.kind === 'approval').map((i) => i.x))) {
        const key = turnKey(group);
        let el = panels.get(key);
        if (!el) {
          const batchKey = group[0].tenant + '\u0000' + group[0].batch;
          const t = turnPanel(group, { who, onDone: () => reload(), changed: batches.has(batchKey) });
          if (!t) continue;
          el = t.el;
          el.dataset.key = t.key;
          el.dataset.batchKey = batchKey;
        }
        want.push(el);
      }
      for (const el of panels.values()) if (!want.includes(el)) el.remove();
      want.forEach((el, i) => { if (turns.children[i] !== el) turns.insertBefore(el, turns.children[i] || null); });
    } catch (e) {
      fill(err, errorBox(e));
    }
  }

  const refresh = serial(load);
  const reload = debounce(refresh, 100);
  // The stream first: what happens while the first load is under way
  // comes as an event, and each time the stream opens the inbox loads
  // again what came before.
  live(['approval.created', 'approval.updated', 'question.created', 'question.updated', 'lock.updated', 'policy.updated'], () => reload(),
    (s) => { state.textContent = s === 'live' ? '● live' : '○ reconnecting…'; state.className = 'live-state ' + s; });
  onOnline(() => reload());
  setInterval(() => {
    for (const [id, c] of cards) {
      const x = c.approval || c.question;
      if (x && Date.parse(x.expires_at) <= Date.now()) remove(id);
    }
  }, 1000);
  await refresh();

  document.addEventListener('keydown', (e) => {
    if (e.ctrlKey || e.metaKey || e.altKey || !shortcutsOn()) return;
    const tag = (e.target.tagName || '').toLowerCase();
    if (tag === 'input' || tag === 'textarea' || tag === 'select' || e.target.isContentEditable) return;
    const ids = order().filter((id) => cards.has(id));
    const i = ids.indexOf(selected);
    const c = selected && cards.get(selected);
    switch (e.key) {
      case 'j': select(ids[Math.min(ids.length - 1, i + 1)] || ids[0]); break;
      case 'k': select(ids[Math.max(0, i - 1)] || ids[0]); break;
      case 'a': if (c) c.approve(); break;
      case 'r': if (c) { e.preventDefault(); c.reject(); } break;
      case 'e': if (c) { e.preventDefault(); c.edit(); } break;
      case 'o': if (c) location.assign(c.el.querySelector('a.open')?.getAttribute('href') || location.href); break;
      default: return;
    }
  });
}
