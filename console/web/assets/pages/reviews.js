// Reviews after the fact: allowed checks and sessions that people should
// look at (a sampled or flagged allow, a tainted session, a failed result),
// and per rule how many reviews drew a concern.
import { h, fill, api, tq, badge, tags, link, ago, errorBox, live, debounce, serial } from '../lib.js';

export async function render(main) {
  const status = new URLSearchParams(location.search).get('status') || 'open';
  const list = h('ol', { class: 'reviews', id: 'reviews' });
  const stats = h('div', { id: 'review-stats' });
  const err = h('div');
  const filter = h('nav', { class: 'filters', 'aria-label': 'Which reviews' },
    ['open', 'concern', 'ok', 'all'].map((s) => h('a', { href: `/reviews?status=${s}`, 'aria-current': s === status ? 'page' : null }, s)));
  fill(main, h('div', { class: 'page-head' }, h('h1', {}, 'Reviews')), filter, err, list,
    h('h2', {}, 'Per rule'), h('p', { class: 'muted' }, 'How many allowed actions of each rule were reviewed, and how many drew a concern: a rule with concerns allows too much.'), stats);

  async function load() {
    try {
      const [reviews, perRule] = await Promise.all([
        api('GET', tq(`/v1/reviews?status=${encodeURIComponent(status)}&limit=200`)),
        api('GET', tq('/v1/reviews/stats')),
      ]);
      fill(err);
      fill(list, reviews.length ? reviews.map(row) : h('li', { class: 'muted' }, status === 'open' ? 'Nothing to review.' : 'No reviews.'));
      renderStats(perRule);
    } catch (e) {
      fill(err, errorBox(e));
    }
  }

  function row(rv) {
    return h('li', { class: 'review', dataset: { id: rv.id } },
      h('div', { class: 'tl-head' }, badge(rv.status), ' ',
        link('/reviews/' + encodeURIComponent(rv.id), rv.kind === 'session' ? `session ${rv.session}` : rv.tool || rv.id, rv.tenant), ' ',
        h('span', { class: 'muted' }, rv.agent), ' ', ago(rv.created_at)),
      h('div', { class: 'tl-sub' }, 'why: ', (rv.why || []).join('; ')),
      (rv.risk || []).length ? h('div', { class: 'tl-sub' }, tags(rv.risk)) : null);
  }

  function renderStats(perRule) {
    const rows = perRule || [];
    if (!rows.length) {
      fill(stats, h('p', { class: 'muted' }, 'No reviews yet.'));
      return;
    }
    fill(stats, h('table', { class: 'stats-table' },
      h('thead', {}, h('tr', {}, ['rule', 'reviews', 'open', 'ok', 'concerns', 'concern share'].map((x) => h('th', { scope: 'col' }, x)))),
      h('tbody', {}, rows.map((r) => h('tr', { class: r.concerns ? 'hot' : null, dataset: { rule: r.rule } },
        h('td', {}, h('code', {}, r.rule)), h('td', {}, String(r.reviews)), h('td', {}, String(r.open)),
        h('td', {}, String(r.ok)), h('td', {}, String(r.concerns)), h('td', {}, `${Math.round((r.concern_share || 0) * 100)}%`))))));
  }

  const refresh = serial(load);
  await refresh();
  const reload = debounce(refresh, 250);
  live(['review.created', 'review.decided'], () => reload());
}
