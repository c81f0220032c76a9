// One approval: its details, every vote, and (while pending) the controls.
import { h, fill, api, tq, live, debounce, serial, fmtTime } from '../lib.js';
import { approvalCard } from '../cards.js';

export async function render(main, { who, arg }) {
  const box = h('div');
  const facts = h('dl', { class: 'facts' });
  fill(main, h('div', { class: 'page-head' }, h('h1', {}, 'Approval'), h('code', { class: 'muted' }, arg)), box, facts);
  let card = null;
  // The page shows the approval as it is now, whatever version a link
  // (a notification's ?revision=) was made for: the card tells the voter
  // what changed, and its votes name the version it shows.
  function renderFacts(a) {
    fill(facts,
      h('dt', {}, 'Status'), h('dd', {}, a.status),
      h('dt', {}, 'Tenant'), h('dd', {}, a.tenant),
      h('dt', {}, 'Check'), h('dd', {}, h('code', {}, a.check_id)),
      h('dt', {}, 'Action hash'), h('dd', {}, h('code', {}, a.action_hash)),
      h('dt', {}, 'Version'), h('dd', { class: 'revision' }, String(a.revision || 1), (a.revision || 1) > 1 ? ' (edited; 1 is the agent\'s request)' : ' (the agent\'s request)'),
      a.args_hash ? [h('dt', {}, 'Arguments hash'), h('dd', {}, h('code', {}, a.args_hash))] : null,
      h('dt', {}, 'Created'), h('dd', {}, fmtTime(a.created_at)),
      h('dt', {}, 'Expires'), h('dd', {}, fmtTime(a.expires_at)),
      a.resolved_at ? [h('dt', {}, 'Resolved'), h('dd', {}, fmtTime(a.resolved_at))] : null,
      a.grant_expires_at ? [h('dt', {}, 'Grant until'), h('dd', {}, fmtTime(a.grant_expires_at))] : null,
      a.consumed_at ? [h('dt', {}, 'Used'), h('dd', {}, fmtTime(a.consumed_at))] : null);
  }
  // One load at a time (see serial): an older answer never overwrites a newer one.
  async function load() {
    const a = await api('GET', tq(`/v1/approvals/${encodeURIComponent(arg)}`));
    if (!card) {
      card = approvalCard(a, { who, detail: true, onChanged: renderFacts });
      fill(box, card.el);
    } else {
      card.update(a);
    }
    renderFacts(a);
  }
  const refresh = serial(load);
  await refresh();
  // Votes cast between the load and the stream opening come with the load
  // that each opening of the stream asks for.
  const reload = debounce(() => refresh().catch(() => {}), 100);
  live(['approval.updated'], (t, d) => { if (!d || d.id === arg || t === 'opened') reload(); });
}
