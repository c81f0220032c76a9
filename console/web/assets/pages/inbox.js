// Inbox: pending approvals and questions, newest first, kept current by the
// event stream. Keys: j/k move, a approves, r rejects, e edits, ? helps.
import { h, fill, api, live, debounce, errorBox } from '../lib.js';
import { approvalCard, questionCard } from '../cards.js';

export async function render(main, { who }) {
  const state = h('span', { class: 'live-state', id: 'live-state' }, 'connecting…');
  const list = h('div', { class: 'inbox', id: 'inbox' });
  const empty = h('p', { class: 'empty muted', id: 'inbox-empty', hidden: true }, 'Nothing is waiting for you. New approvals and questions appear here as they come.');
  const err = h('div');
  const help = h('p', { class: 'shortcuts muted' }, 'Keys: ', h('kbd', {}, 'j'), '/', h('kbd', {}, 'k'), ' move, ', h('kbd', {}, 'a'), ' approve, ',
    h('kbd', {}, 'r'), ' reject, ', h('kbd', {}, 'e'), ' edit, ', h('kbd', {}, 'o'), ' open');
  fill(main, h('div', { class: 'page-head' }, h('h1', {}, 'Inbox'), state), help, err, empty, list);

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

  function remove(id) {
    const c = cards.get(id);
    if (!c) return;
    const ids = order();
    const i = ids.indexOf(id);
    c.el.classList.add('leaving');
    setTimeout(() => c.el.remove(), 600);
    cards.delete(id);
    if (selected === id) select(ids[i + 1] || ids[i - 1] || null);
    setTimeout(() => { empty.hidden = cards.size > 0; }, 650);
  }

  async function load() {
    try {
      const [approvals, questions] = await Promise.all([
        api('GET', '/v1/approvals?status=pending&limit=200'),
        api('GET', '/v1/questions?status=pending&limit=200'),
      ]);
      fill(err);
      const items = [
        ...approvals.map((a) => ({ kind: 'approval', x: a })),
        ...questions.map((q) => ({ kind: 'question', x: q })),
      ].sort((p, q) => (q.x.created_at < p.x.created_at ? -1 : q.x.created_at > p.x.created_at ? 1 : q.x.id < p.x.id ? -1 : 1));
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
    } catch (e) {
      fill(err, errorBox(e));
    }
  }

  const reload = debounce(load, 100);
  live(['approval.created', 'approval.updated', 'question.created', 'question.updated', 'lock.updated', 'policy.updated'], () => reload(),
    (s) => { state.textContent = s === 'live' ? '● live' : '○ reconnecting…'; state.className = 'live-state ' + s; });
  await load();

  document.addEventListener('keydown', (e) => {
    if (e.ctrlKey || e.metaKey || e.altKey) return;
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
      case 'o': if (c) location.assign(c.el.querySelector('.meta a:last-child')?.getAttribute('href') || location.href); break;
      default: return;
    }
  });
}
