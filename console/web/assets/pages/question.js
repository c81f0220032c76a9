// One question and, while pending, the control to answer it.
import { h, fill, api, tq } from '../lib.js';
import { questionCard } from '../cards.js';

export async function render(main, { who, arg }) {
  const q = await api('GET', tq(`/v1/questions/${encodeURIComponent(arg)}`));
  fill(main, h('div', { class: 'page-head' }, h('h1', {}, 'Question'), h('code', { class: 'muted' }, arg)),
    questionCard(q, { who, detail: true }).el);
}
