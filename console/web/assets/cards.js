// Approval and question cards: everything a careful approver needs to
// decide, and the controls to do it. The server applies the same rules as
// for any API client; the hints here only save a round trip.
import { h, fill, api, ago, left, badge, tags, link, jsonView, pretty, diffView, errorBox, toast, withTenant, isAllTenants, marksFromFacts, approverWords, restoreButtons, trackDraft, draft, dropDraft } from './lib.js';
import { confirmVote } from './passkey.js';

/**
 * counted returns the approving votes that count, as rein counts them
 * (approval.go, satisfied): those since the last edit, one per voter.
 */
export function counted(a) {
  const seen = new Set();
  return sinceEdit(a).filter((v) => {
    if (v.vote !== 'approve' && v.vote !== 'edit') return false;
    const id = String(v.by_key || '').startsWith('client:') ? v.by_key : 'name:' + v.by;
    if (seen.has(id)) return false;
    seen.add(id);
    return true;
  });
}

/**
 * sinceEdit returns the votes on the approval's current version: those from
 * its last edit on (all of them when it was never edited). A vote before
 * an edit was about other arguments: its voter may vote again.
 */
export function sinceEdit(a) {
  const votes = a.votes || [];
  let start = 0;
  votes.forEach((v, i) => { if (v.vote === 'edit') start = i; });
  return votes.slice(start);
}

/** counting is how many approving votes count (those since the last edit). */
export function counting(a) {
  return counted(a).length;
}

/** matches reports whether a voter ({name, roles, groups, client}) is one the selector names. */
function matches(sel, v) {
  if (sel === 'client' || v.client) return sel === 'client' && !!v.client;
  const i = String(sel).indexOf(':');
  if (i < 1) return false;
  const kind = sel.slice(0, i);
  const val = sel.slice(i + 1);
  return (kind === 'group' && (v.groups || []).includes(val)) || (kind === 'user' && v.name === val) || (kind === 'role' && (v.roles || []).includes(val));
}

/** approverSets are the sets that must each be satisfied. */
export function approverSets(a) {
  return (a.approver_sets || []).length ? a.approver_sets : [a.approvers || []];
}

function setWords(set) {
  return set.map(approverWords).join(' or ');
}

/**
 * quorum says where an approval stands: how many approving votes count of
 * the quorum, and for each approver set the votes that satisfy it. rein
 * approves when the quorum is reached and every set has a vote.
 */
export function quorum(a) {
  const votes = counted(a);
  const need = Math.max(a.quorum || 1, 1);
  const sets = approverSets(a).map((set) => {
    const by = votes.filter((v) => set.some((s) => matches(s, { name: v.by, roles: v.roles, groups: v.groups, client: String(v.by_key || '').startsWith('client:') })));
    return { set, words: setWords(set), by: by.map((v) => v.by), met: by.length > 0 };
  });
  const missing = [];
  if (votes.length < need) missing.push(`${need - votes.length} more approval${need - votes.length === 1 ? '' : 's'}`);
  for (const x of sets) if (!x.met) missing.push(`one from ${x.words}`);
  return { have: votes.length, need, sets, missing };
}

function voterOf(who) {
  return { name: who.name, roles: who.roles, groups: who.groups || [] };
}

/** countsFor lists the approver sets the signed-in person's vote would count for. */
export function countsFor(who, a) {
  return approverSets(a).filter((set) => set.some((s) => matches(s, voterOf(who)))).map(setWords);
}

/** highRisk says whether approving needs a deliberate confirm: destructive or money-moving. */
export function highRisk(a) {
  return (a.risk || []).some((t) => /(^|\.)destructive$/.test(t) || t === 'money' || t.startsWith('money.'));
}

/** why says why rein asks: the rule and its reason, or that the rule gives none. */
export function why(a) {
  const rule = a.rule || '';
  const reason = a.reason || '';
  const more = approverSets(a).length > 1
    ? h('p', { class: 'more-rules muted' }, `More than one rule asks for this: each of the ${approverSets(a).length} approver sets below must approve.`) : null;
  // Each rule that asked, with its own reason and the people it asks.
  const asks = a.asks || [];
  if (asks.length > 1) {
    return [h('ul', { class: 'asks' }, asks.map((x) => h('li', {}, h('code', {}, x.rule), ' ',
      !x.reason || x.reason === 'matched rule ' + x.rule
        ? h('span', { class: 'reason muted' }, 'gives no reason')
        : h('span', { class: 'reason' }, x.reason),
      h('span', { class: 'muted' }, ' — asks ', setWords(x.approvers || []) || 'the default approvers')))), more];
  }
  if (!rule) return [h('span', { class: 'reason' }, reason || 'no rule named'), more];
  if (!reason || reason === 'matched rule ' + rule) {
    return [h('code', {}, rule), ' ', h('span', { class: 'reason muted' }, 'asks for a person; the policy gives no reason for this rule'), more];
  }
  return [h('code', {}, rule), ' ', h('span', { class: 'reason' }, reason), more];
}

function oneLine(v) {
  const s = JSON.stringify(v);
  return s.length > 90 ? s.slice(0, 90) + '…' : s;
}

/** recent renders a session's latest checks (except skip) into el. */
export async function recent(el, tenant, session, skip) {
  if (!session) {
    fill(el, h('p', { class: 'muted' }, 'No session given with this check.'));
    return;
  }
  try {
    const q = `/v1/sessions/${encodeURIComponent(session)}/checks?limit=6` + (tenant ? '&tenant=' + encodeURIComponent(tenant) : '');
    const list = (await api('GET', q)).filter((c) => c.id !== skip).slice(0, 5);
    fill(el, list.length ? h('ol', { class: 'recent' }, list.map((c) =>
      h('li', {}, badge(c.decision), ' ', h('code', {}, c.check.tool), ' ', h('span', { class: 'muted' }, oneLine(c.args ?? c.check.args)), ' ', ago(c.created_at))))
      : h('p', { class: 'muted' }, 'Nothing else in this session yet.'));
  } catch (err) {
    fill(el, errorBox(err));
  }
}

const HOLD_MS = 1200;

/**
 * holdButton is a button that acts only when held (pointer, or Enter/Space
 * kept down) for HOLD_MS: a deliberate confirm that a slip or a stray key
 * cannot give.
 */
function holdButton(label, attrs, onDone) {
  const fillBar = h('span', { class: 'hold-fill', 'aria-hidden': 'true' });
  const b = h('button', { ...attrs, type: 'button' }, fillBar, h('span', { class: 'hold-label' }, label));
  let timer = null;
  const start = (e) => {
    if (b.disabled || timer) return;
    if (e && e.type === 'pointerdown') b.setPointerCapture?.(e.pointerId);
    b.classList.add('holding');
    timer = setTimeout(() => { timer = null; b.classList.remove('holding'); onDone(); }, HOLD_MS);
  };
  const stop = () => {
    if (!timer) return;
    clearTimeout(timer);
    timer = null;
    b.classList.remove('holding');
  };
  b.addEventListener('pointerdown', start);
  for (const ev of ['pointerup', 'pointercancel', 'pointerleave', 'blur']) b.addEventListener(ev, stop);
  b.addEventListener('keydown', (e) => { if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); if (!e.repeat) start(); } });
  b.addEventListener('keyup', (e) => { if (e.key === 'Enter' || e.key === ' ') stop(); });
  b.addEventListener('contextmenu', (e) => e.preventDefault());
  return b;
}

/** revisionOf is the version of the action an approval holds: 1 is the agent's request, each edit makes the next. */
export function revisionOf(a) {
  return a.revision || 1;
}

/** willRun is what the approval's current version runs: the last edit's arguments, else the agent's request. */
export function willRun(a) {
  return a.approved_args != null ? a.approved_args : a.args;
}

/** lastEdit is the vote that made the approval's current version, if it was edited. */
function lastEdit(a) {
  return (a.votes || []).filter((v) => v.vote === 'edit').pop() || null;
}

function value(v) {
  return h('code', {}, JSON.stringify(v));
}

/**
 * changesView says what an edit changed from the agent's request, argument
 * by argument: the first thing an approver of an edited action must see.
 */
export function changesView(a) {
  const e = lastEdit(a);
  const list = a.changes || [];
  return h('div', { class: 'changes', role: 'group', 'aria-label': "Changed from the agent's request" },
    h('p', { class: 'changes-head' }, h('strong', {}, 'Edited'), e ? [' by ', h('strong', {}, e.by)] : null, ` (version ${revisionOf(a)}): `,
      list.length ? "changed from the agent's request:" : "no argument differs from the agent's request."),
    list.length ? h('ul', { class: 'changes-list' }, list.map((c) => h('li', {}, h('code', { class: 'path' }, c.path || 'the arguments'), ' ',
      !('from' in c) ? [h('span', { class: 'muted' }, 'added: '), h('ins', {}, value(c.to))]
        : !('to' in c) ? [h('span', { class: 'muted' }, 'removed, was '), h('del', {}, value(c.from))]
          : [h('span', { class: 'muted' }, 'was '), h('del', {}, value(c.from)), h('span', { class: 'muted' }, ', now '), h('ins', {}, value(c.to))]))) : null);
}

/**
 * willRunView shows the version of the action a vote is about: for an
 * edited one, first what changed from the agent's request, then the edited
 * arguments whole. The agent's own arguments are never shown as what will
 * run once they have been edited.
 */
export function willRunView(a, marks = []) {
  const args = h('div', { class: 'will-run-args' }, jsonView(willRun(a), revisionOf(a) === 1 ? marks : []));
  return revisionOf(a) === 1 ? args : [changesView(a), args];
}

// destination names what a contained run's net.connect approval opens:
// "api.stripe.com:443 from session X".
function destination(a) {
  if (a.tool !== 'net.connect' || !a.args || !a.args.host) return null;
  return h('span', { class: 'destination' }, h('strong', {}, `${a.args.host}:${a.args.port}`), a.session ? ` from session ${a.session} ` : ' ');
}

/**
 * approvalCard renders an approval. opts.onResolved(a) is called when a
 * vote leaves it no longer pending; opts.onChanged(a) when the card learns
 * a newer state of it from a vote's answer.
 *
 * The card shows one version of the action at a time, and every vote it
 * sends names that version's revision, the one on screen when the voter
 * pressed: rein refuses an approve or an edit of a version that is no
 * longer current (409), and the card then shows the current one and says
 * so, without voting again.
 */
export function approvalCard(a, { who, onResolved, onChanged, detail = false }) {
  const card = h('article', { class: 'card approval', id: 'card-' + a.id, tabindex: '-1', dataset: { id: a.id, kind: 'approval' }, 'aria-labelledby': 'title-' + a.id });
  const body = h('div', { class: 'card-body' });
  const status = h('div', { class: 'status-line' });
  const actions = h('div', { class: 'actions' + (detail ? ' sticky-actions' : '') });
  const forms = h('div', { class: 'forms' });
  const msg = h('div', { class: 'card-msg', role: 'status' });
  const recentEl = h('div', { class: 'recent-box' }, h('p', { class: 'muted' }, 'Loading the session…'));
  const argsEl = h('dd', { class: 'args will-run' });
  const headBadge = h('span', { class: 'head-badge' });
  let current = a; // the approval as rein last said
  let shown = a; // the version on screen: its revision is the one every vote names
  let marks = [];
  let editing = null; // the voter's open editor: {send, ready, bar}

  const t = a.tenant;
  const risky = highRisk(a);
  const path = `/v1/approvals/${encodeURIComponent(a.id)}`;
  const tenantQ = t && t !== who.tenant ? '?tenant=' + encodeURIComponent(t) : '';
  card.append(
    h('header', { class: 'card-head' },
      h('h2', { id: 'title-' + a.id }, h('code', { class: 'tool' }, a.tool), ' ', destination(a), headBadge),
      h('div', { class: 'meta' },
        h('span', {}, 'agent ', h('strong', { class: 'agent' }, a.agent)),
        h('span', {}, 'session ', a.session ? link('/sessions/' + encodeURIComponent(a.session), a.session, t) : h('span', { class: 'muted' }, 'none')),
        h('span', {}, 'asked ', ago(a.created_at)),
        detail ? null : h('a', { href: withTenant('/approvals/' + encodeURIComponent(a.id), t), class: 'open', 'aria-label': `Open the approval of ${a.tool}` }, 'open'))),
    body, status, msg, forms, actions);

  fill(body,
    h('dl', { class: 'facts' },
      h('dt', {}, 'Will run'), argsEl,
      h('dt', {}, 'Risk'), h('dd', {}, (a.risk || []).length ? tags(a.risk) : h('span', { class: 'muted' }, 'none found'),
        risky ? h('p', { class: 'notice hot-note' }, (a.risk || []).some((x) => x === 'money' || x.startsWith('money.')) ? 'Moves money: approving needs a deliberate confirm.' : 'Destructive: approving needs a deliberate confirm.') : null),
      h('dt', {}, 'Why'), h('dd', {}, why(a)),
      h('dt', { class: 'extra' }, 'Intent'), h('dd', { class: 'intent extra' }, a.intent ? a.intent : h('span', { class: 'muted' }, 'not given')),
      h('dt', { class: 'extra' }, 'Session'), h('dd', { class: 'extra' }, recentEl)));
  renderArgs();
  recent(recentEl, t === who.tenant ? '' : t, a.session, a.check_id);
  loadFacts();

  // What will run. The check behind the approval carries rein's facts
  // about the agent's request (the commands, URLs, paths and SQL it
  // found), highlighted in its arguments; an edited version is shown
  // without them, since they describe other arguments.
  function renderArgs() {
    const lit = marks.length && revisionOf(shown) === 1;
    fill(argsEl, willRunView(shown, marks),
      lit ? h('p', { class: 'legend muted' }, 'Highlighted: what rein found that changes things (commands not known to be read-only, files written, private hosts, statements that write). Hover or focus a part for what it is.') : null);
  }

  async function loadFacts() {
    if (!a.check_id) return;
    try {
      const c = await api('GET', `/v1/checks/${encodeURIComponent(a.check_id)}` + tenantQ);
      marks = marksFromFacts(c.facts);
      if (marks.length) renderArgs();
    } catch (_) { /* the arguments show without highlights */ }
  }

  // show puts x on screen. A new version of the action replaces the one
  // shown, with the controls that vote on it; an open editor closes, since
  // its text edited the version that was shown.
  function show(x, notice) {
    current = x;
    if (revisionOf(x) !== revisionOf(shown)) {
      shown = x;
      renderArgs();
      if (editing) { editing = null; fill(forms); }
    }
    renderStatus();
    if (notice) fill(msg, notice);
  }

  // changedNotice tells the voter that the action they were looking at is
  // not the one on screen now.
  function changedNotice(x, refused) {
    const e = lastEdit(x);
    return h('p', { class: 'notice error changed-notice', role: refused ? 'alert' : null },
      h('strong', {}, 'Changed since you looked: review again. '), refused ? 'Your vote was not counted. ' : '',
      e ? `${e.by} edited the action` : 'The action changed', ` (now version ${revisionOf(x)}): what changed from the agent's request is shown first under “Will run”.`);
  }

  // A pending approval whose time is up takes no more votes (rein refuses
  // them): it shows as expired at once, without waiting for the server.
  let expiryTimer = null;
  function renderStatus() {
    const x = current;
    const qs = quorum(x);
    const timeUp = x.status === 'pending' && Date.parse(x.expires_at) <= Date.now();
    const shownStatus = timeUp ? 'expired' : x.status;
    fill(headBadge, badge(shownStatus, 'status ' + shownStatus));
    const pending = x.status === 'pending' && !timeUp;
    clearTimeout(expiryTimer);
    if (pending) expiryTimer = setTimeout(renderStatus, Math.min(Date.parse(x.expires_at) - Date.now() + 50, 2 ** 31 - 1));
    fill(status,
      h('span', { class: 'votes' }, `${qs.have} of ${qs.need} approval${qs.need === 1 ? '' : 's'}`),
      pending ? left(x.expires_at) : badge(shownStatus, 'status ' + shownStatus),
      timeUp ? h('span', { class: 'muted' }, 'time is up: rein takes no more votes') : null,
      h('ul', { class: 'sets', 'aria-label': 'Approvals needed per approver set' }, qs.sets.map((s) =>
        h('li', { class: s.met ? 'met' : 'unmet' }, h('span', { 'aria-hidden': 'true' }, s.met ? '✓ ' : '○ '),
          s.words, ': ', s.met ? `approved by ${s.by.join(', ')}` : '0 of 1, waiting'))),
      pending && qs.missing.length && qs.have > 0 ? h('p', { class: 'still' }, 'Still pending: needs ', qs.missing.join(' and '), '.') : null,
      (x.votes || []).length ? h('ul', { class: 'votes-list' }, x.votes.map((v) => {
        const as = approverSets(x).filter((set) => set.some((sel) => matches(sel, { name: v.by, roles: v.roles, groups: v.groups, client: String(v.by_key || '').startsWith('client:') }))).map(setWords);
        return h('li', {}, h('strong', {}, v.by), ' ', v.vote, v.revision ? h('span', { class: 'muted' }, ` (version ${v.revision})`) : null, v.message ? [': “', v.message, '”'] : '', ' ', ago(v.at),
          v.vote !== 'reject' && as.length ? h('span', { class: 'muted' }, ` · counted for ${as.join('; ')}`) : null);
      })) : null);
    renderActions(pending);
  }

  // renderActions draws the action bar for the version shown. While the
  // voter's editor is open, the bar offers no approve of the version shown:
  // its approve sends the edited arguments, or the voter leaves the editor.
  function renderActions(pending = current.status === 'pending' && Date.parse(current.expires_at) > Date.now()) {
    const x = current;
    fill(actions);
    if (!pending) { editing = null; fill(forms); return; }
    if (x.agent_key_id === who.key_id) {
      actions.append(h('p', { class: 'muted' }, 'You asked for this action with this key: you cannot vote on it.'));
      return;
    }
    const mineVote = (v) => v.by_key === who.key_id || v.by === who.name;
    if (sinceEdit(x).some(mineVote)) {
      editing = null;
      fill(forms);
      actions.append(h('p', { class: 'muted voted' }, 'You have voted on this approval.'));
      return;
    }
    const before = (x.votes || []).filter((v) => mineVote(v) && v.vote !== 'reject').pop();
    if (before) {
      actions.append(h('p', { class: 'notice earlier-vote' }, `You voted ${before.vote} on version ${before.revision || 1}; the action was edited since, so that vote no longer counts: review this version and vote again.`));
    }
    if (!who.roles.includes('approver') && !who.roles.includes('admin')) {
      actions.append(h('p', { class: 'muted' }, 'Auditors can read approvals but not vote.'));
      return;
    }
    const qs = quorum(x);
    const mine = countsFor(who, x);
    actions.append(mine.length
      ? h('p', { class: 'counts-for' }, 'Your vote counts for: ', h('strong', {}, mine.join('; ')),
        qs.sets.length > mine.length ? h('span', { class: 'muted' }, ` (not for ${qs.sets.filter((s) => !mine.includes(s.words)).map((s) => s.words).join('; ')})`) : null)
      : h('p', { class: 'notice' }, `You are not one of the approvers named (${qs.sets.map((s) => s.words).join('; ')}); rein will refuse your vote.`));
    const rev = revisionOf(shown);
    const reject = h('button', { class: 'danger reject', onclick: () => openReject(), title: 'Reject with a message (r)' }, 'Reject…');
    let bar = null;
    if (editing) {
      const ed = editing;
      bar = h('button', { class: 'primary approve-edited', type: 'button', onclick: () => ed.send(), title: 'Approve the arguments as edited in the editor' }, 'Approve edited arguments');
      ed.bar = bar;
      actions.append(bar, reject, h('button', { class: 'cancel-edit', type: 'button', onclick: () => closeEditor(), title: 'Close the editor, dropping the edit' }, 'Leave the editor'));
    } else {
      const approveBtn = risky
        ? holdButton('Hold to approve', { class: 'primary approve hold', title: 'Press and hold to approve', 'aria-label': 'Hold to approve: press and hold, or hold Enter' }, () => approve(rev))
        : h('button', { class: 'primary approve', onclick: () => approve(rev), title: 'Approve (a)' }, 'Approve');
      actions.append(approveBtn, reject, h('button', { class: 'edit', onclick: () => openEdit(), title: 'Edit the arguments, then approve (e)' }, 'Edit…'));
    }
    const stop = stopAgentButton();
    if (stop) actions.append(stop);
    restoreButtons(actions.querySelectorAll('button')); // disabled while offline or once the session has ended
    if (bar && !editing.ready()) bar.disabled = true;
    if (!forms.firstChild && draft('reject:' + x.id)) openReject(false);
  }

  // Admins can stop the asking agent with one tap: a lock on the agent
  // (and its sub-agents) denies its every further check and voids its
  // pending approvals, this one included. Stopping is safe to do in haste;
  // the Admin page removes the lock.
  function stopAgentButton() {
    if (!who.roles.includes('admin')) return null;
    const agent = a.agent.split('/')[0];
    return h('button', { class: 'danger stop-agent', title: `Lock agent ${agent}: every check it makes is denied` , onclick: async (e) => {
      const b = e.currentTarget;
      b.disabled = true;
      try {
        const body = { target: { agent }, reason: `stopped from the console by ${who.name} while reviewing ${a.tool}` };
        if (t && t !== who.tenant) body.tenant = t;
        await api('POST', '/v1/locks', body);
        toast(`Agent ${agent} stopped: every check it makes is denied until the lock is removed (Admin page).`);
        fill(msg, h('p', { class: 'notice' }, `Agent ${agent} is stopped. Its pending approvals are void.`));
      } catch (err) {
        fill(msg, errorBox(err));
        restoreButtons([b]);
      }
    } }, `Stop agent ${agent}`);
  }

  function tell(label, x) {
    const qs = quorum(x);
    if (x.status === 'pending') {
      const rest = qs.missing.length ? 'still pending: needs ' + qs.missing.join(' and ') : 'still pending';
      return `${label} recorded for ${a.tool}; ${rest}.`;
    }
    return `${label}: ${a.tool} is now ${x.status}.`;
  }

  // vote sends body, which names the revision of the version its voter
  // was shown. A refusal because that version is no longer current shows
  // the current one; nothing is sent again.
  async function vote(body, label) {
    fill(msg);
    const buttons = [...card.querySelectorAll('.actions button, .forms button')];
    for (const b of buttons) b.disabled = true;
    try {
      if (current.step_up && body.vote !== 'reject') body = { ...body, step_up: await confirmVote(a.id) }; // passkey step-up
      const x = await api('POST', path + '/votes', body);
      dropDraft('reject:' + a.id);
      const said = tell(label, x);
      toast(said);
      editing = null;
      fill(forms);
      show(x);
      if (x.status === 'pending') fill(msg, h('p', { class: 'notice' }, said));
      onChanged && onChanged(x);
      if (x.status !== 'pending' && onResolved) onResolved(x);
    } catch (err) {
      if (err.status === 409 && err.code === 'stale_revision') {
        const x = err.details && err.details.id === a.id ? err.details : await api('GET', path + tenantQ).catch(() => null);
        toast('Not counted: the action changed since you looked. Review it again.', 'error');
        if (x) {
          show(x, changedNotice(x, true));
          onChanged && onChanged(x);
          return;
        }
      }
      fill(msg, errorBox(err));
      if (err.status === 0) toast('Not sent: ' + err.message, 'error');
      restoreButtons(buttons); // when offline, enabled again when the server answers
      if (editing && editing.bar && !editing.ready()) editing.bar.disabled = true;
    }
  }

  function approve(revision) {
    return vote({ vote: 'approve', message: '', revision }, 'Your approval');
  }

  function openReject(focus = true) {
    const revision = revisionOf(shown); // a reject counts whatever the version
    const text = trackDraft(h('textarea', { class: 'reject-message', rows: 2, placeholder: 'Why? The agent receives this message.', 'aria-label': 'Rejection message' }), 'reject:' + a.id);
    const send = () => vote({ vote: 'reject', message: text.value.trim(), revision }, 'Your rejection');
    const cancel = () => { dropDraft('reject:' + a.id); fill(forms); };
    text.addEventListener('keydown', (e) => {
      if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) send();
      if (e.key === 'Escape') cancel();
    });
    const wasEditing = !!editing;
    editing = null;
    fill(forms, h('div', { class: 'form reject-form' }, text,
      h('div', { class: 'row' },
        h('button', { class: 'danger confirm-reject', onclick: send }, 'Reject'),
        h('button', { class: 'cancel', onclick: cancel }, 'Cancel'),
        h('span', { class: 'muted' }, 'Ctrl+Enter sends, Esc cancels'))));
    if (wasEditing) renderActions();
    if (focus) text.focus();
  }

  function closeEditor() {
    editing = null;
    fill(forms);
    renderActions();
  }

  // openEdit edits the version shown; the edit names its revision.
  function openEdit() {
    const base = shown;
    const orig = pretty(willRun(base));
    const text = h('textarea', { class: 'json-editor', rows: Math.min(20, orig.split('\n').length + 2), spellcheck: 'false', 'aria-label': 'Edited arguments (JSON)' });
    text.value = orig;
    const note = h('input', { class: 'edit-message', placeholder: 'Note for the agent (optional)', 'aria-label': 'Message' });
    const diff = h('div', { class: 'diff-box' });
    const send = h('button', { class: 'primary confirm-edit', disabled: true }, 'Approve edited arguments');
    let parsed = null;
    const ready = () => parsed !== null && pretty(parsed) !== orig;
    const update = () => {
      try {
        parsed = JSON.parse(text.value);
        if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('the arguments must be a JSON object');
      } catch (err) {
        parsed = null;
        fill(diff, h('p', { class: 'notice error' }, 'Not valid JSON: ' + err.message));
      }
      if (parsed) {
        const now = pretty(parsed);
        fill(diff, h('p', { class: 'muted' }, now === orig ? 'No change yet: the diff against what will run now appears here.' : 'Diff against what will run now:'), diffView(orig, now));
      }
      const off = document.body.classList.contains('offline') || document.body.classList.contains('ended');
      send.disabled = !ready() || off;
      if (editing && editing.bar) editing.bar.disabled = !ready() || off;
    };
    const sendEdit = () => ready() && vote({ vote: 'edit', message: note.value.trim(), args: parsed, revision: revisionOf(base) }, 'Your approval with edits');
    text.addEventListener('input', update);
    text.addEventListener('keydown', (e) => { if (e.key === 'Escape') closeEditor(); });
    send.addEventListener('click', sendEdit);
    fill(forms, h('div', { class: 'form edit-form' },
      h('p', { class: 'muted' }, 'Edited arguments are checked by policy again; rein refuses an edit that policy would deny. While the editor is open, approving sends the edited arguments.'),
      text, diff, note,
      h('div', { class: 'row' }, send, h('button', { class: 'cancel', onclick: () => closeEditor() }, 'Cancel'))));
    editing = { send: sendEdit, ready, bar: null };
    renderActions();
    update();
    text.focus();
  }

  renderStatus();
  return {
    el: card,
    get approval() { return current; },
    // A newer version of the action replaces the one shown, and the voter
    // is told (unless they made it); otherwise only new votes are drawn.
    update(x) {
      if (revisionOf(x) !== revisionOf(shown)) {
        const e = lastEdit(x);
        show(x, e && e.by_key === who.key_id ? null : changedNotice(x, false));
      } else if (x.status !== current.status || (x.votes || []).length !== (current.votes || []).length) {
        current = x;
        renderStatus();
      }
    },
    // A high-risk approval is never approved by a single key: the key
    // brings the focus to the hold button instead.
    approve: () => {
      const b = card.querySelector('button.approve');
      if (!b || b.disabled) return;
      if (b.classList.contains('hold')) {
        b.focus();
        fill(msg, h('p', { class: 'notice hold-hint' }, 'This approval is destructive or moves money: press and hold “Hold to approve” (or hold Enter) to approve.'));
        return;
      }
      b.click();
    },
    reject: () => card.querySelector('button.reject') && openReject(),
    edit: () => card.querySelector('button.edit') && openEdit(),
  };
}

/** questionCard renders a question with the control its shape calls for. */
export function questionCard(q, { who, onResolved, detail = false }) {
  const card = h('article', { class: 'card question', id: 'card-' + q.id, tabindex: '-1', dataset: { id: q.id, kind: 'question' } });
  const control = h('div', { class: 'answer' });
  const msg = h('div', { class: 'card-msg' });
  let current = q;
  fill(card, 
    h('header', { class: 'card-head' },
      h('h2', {}, h('span', { class: 'kind' }, 'Question'), ' ', badge(q.status, 'status ' + q.status)),
      h('div', { class: 'meta' },
        h('span', {}, 'agent ', h('strong', {}, q.agent)),
        h('span', {}, 'session ', q.session ? link('/sessions/' + encodeURIComponent(q.session), q.session, q.tenant) : h('span', { class: 'muted' }, 'none')),
        h('span', {}, 'asked ', ago(q.created_at)),
        q.status === 'pending' ? left(q.expires_at) : null,
        detail ? null : h('a', { href: withTenant('/questions/' + encodeURIComponent(q.id), q.tenant), class: 'open', 'aria-label': 'Open the question' }, 'open'))),
    h('p', { class: 'question-text' }, q.text),
    (q.ask || []).length ? h('p', { class: 'muted' }, 'asked of: ' + q.ask.map(approverWords).join(', ')) : null,
    msg, control);

  async function answer(value) {
    fill(msg);
    for (const b of card.querySelectorAll('button')) b.disabled = true;
    try {
      current = await api('POST', `/v1/questions/${encodeURIComponent(q.id)}/answer`, { answer: value });
      dropDraft('answer:' + q.id);
      toast('Answered: ' + q.text.slice(0, 40));
      renderControl();
      if (current.status !== 'pending' && onResolved) onResolved(current);
    } catch (err) {
      fill(msg, errorBox(err));
      restoreButtons(card.querySelectorAll('button'));
    }
  }

  function renderControl() {
    const x = current;
    if (x.status !== 'pending') {
      fill(control, h('p', {}, 'Answer: ', x.answer !== undefined && x.answer !== null ? jsonView(x.answer) : '—', x.answered_by ? [' by ', h('strong', {}, x.answered_by)] : ''));
      return;
    }
    if (x.agent_key_id === who.key_id) {
      fill(control, h('p', { class: 'muted' }, 'You asked this question with this key: you cannot answer it.'));
      return;
    }
    if ((x.choices || []).length) {
      fill(control, h('div', { class: 'choices' }, x.choices.map((c) => h('button', { class: 'choice', onclick: () => answer(c) }, c))));
      return;
    }
    if (x.schema && x.schema.properties) {
      fill(control, schemaForm(x.schema, answer));
      return;
    }
    const text = trackDraft(h('textarea', { class: 'answer-text', rows: 2, 'aria-label': 'Answer' }), 'answer:' + x.id);
    fill(control, h('div', { class: 'form' }, text, h('button', { class: 'primary', onclick: () => text.value.trim() && answer(text.value.trim()) }, 'Send answer')));
  }

  renderControl();
  return {
    el: card,
    get question() { return current; },
    update(x) { if (x.status !== current.status) { current = x; renderControl(); } },
    approve() {}, reject() {}, edit() {},
  };
}

/** schemaForm generates a form for a flat object JSON Schema. */
function schemaForm(schema, submit) {
  const required = new Set(schema.required || []);
  const fields = Object.entries(schema.properties).map(([name, p]) => {
    const id = 'f-' + name.replace(/[^A-Za-z0-9_-]/g, '_') + '-' + Math.random().toString(36).slice(2, 7);
    let input;
    if (Array.isArray(p.enum)) {
      input = h('select', { id, name }, required.has(name) ? null : h('option', { value: '' }, '—'), p.enum.map((v) => h('option', { value: JSON.stringify(v) }, String(v))));
    } else if (p.type === 'boolean') {
      input = h('input', { id, name, type: 'checkbox' });
    } else if (p.type === 'number' || p.type === 'integer') {
      input = h('input', { id, name, type: 'number', step: p.type === 'integer' ? '1' : 'any', required: required.has(name) });
    } else {
      input = h('input', { id, name, type: 'text', required: required.has(name) });
    }
    return { name, p, input, el: h('div', { class: 'field' }, h('label', { for: id }, p.title || name, required.has(name) ? ' *' : ''), input, p.description ? h('small', { class: 'muted' }, p.description) : null) };
  });
  const form = h('form', { class: 'form schema-form' }, fields.map((f) => f.el), h('button', { type: 'submit', class: 'primary' }, 'Send answer'));
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const out = {};
    for (const f of fields) {
      const { input, p, name } = f;
      if (Array.isArray(p.enum)) { if (input.value !== '') out[name] = JSON.parse(input.value); }
      else if (p.type === 'boolean') out[name] = input.checked;
      else if (p.type === 'number' || p.type === 'integer') { if (input.value !== '') out[name] = Number(input.value); }
      else if (input.value !== '' || required.has(name)) out[name] = input.value;
    }
    submit(out);
  });
  return form;
}

export { withTenant };

/**
 * turnsOf groups pending approvals by agent turn (the checks' batch): the
 * turns of two or more approvals from one agent, key and session, the only
 * ones rein votes on together. Approvals are in the order given.
 */
export function turnsOf(approvals) {
  const by = new Map();
  for (const a of approvals) {
    if (!a.batch || a.status !== 'pending') continue;
    const k = a.tenant + '\u0000' + a.batch;
    if (!by.has(k)) by.set(k, []);
    by.get(k).push(a);
  }
  return [...by.values()].filter((list) => list.length > 1 && list.every((a) =>
    a.agent === list[0].agent && a.agent_key_id === list[0].agent_key_id && a.session === list[0].session));
}

/** turnKey names a turn as shown: its approvals, each in its version. */
export function turnKey(list) {
  return list[0].tenant + '\u0000' + list[0].batch + '\u0000' + list.map((a) => `${a.id}@${revisionOf(a)}`).sort().join();
}

/**
 * turnPanel decides every pending approval of one agent turn at once, with
 * each action listed whole. Offered only when the signed-in person's vote
 * counts on every one of them; a destructive or money-moving action in the
 * turn makes approving all a press-and-hold. Before voting it asks rein
 * for the turn's pending approvals again and votes only when they are the
 * ones shown, each in the version shown (the vote names each approval's
 * revision, so rein refuses it too when one changed in between); after
 * voting it says loudly if rein counted one more. opts.changed: the turn
 * was shown before with other actions or versions (the voter is told).
 */
export function turnPanel(list, { who, onDone, changed = false }) {
  const first = list[0];
  const ids = list.map((a) => a.id).sort();
  const seen = list.map((a) => `${a.id}@${revisionOf(a)}`).sort(); // each approval in the version shown
  if (!list.every((a) => countsFor(who, a).length > 0)) return null;
  const msg = h('div', { class: 'turn-msg', role: 'status' });
  const forms = h('div', { class: 'forms' });
  const n = list.length;
  const risky = list.some(highRisk);
  const panel = h('section', { class: 'turn', dataset: { batch: first.batch }, 'aria-labelledby': 'turn-title-' + first.id },
    h('h2', { id: 'turn-title-' + first.id }, `${first.agent}'s turn `, h('code', {}, first.batch), `: ${n} approvals`),
    h('p', { class: 'muted' }, `One vote on all ${n} actions of this turn (session ${first.session || '—'}). Each one:`),
    h('ol', { class: 'turn-actions' }, list.map((a) => h('li', { dataset: { id: a.id } },
      h('code', { class: 'tool' }, a.tool), ' ', (a.risk || []).length ? tags(a.risk) : null, h('div', { class: 'will-run' }, willRunView(a))))));
  const actions = h('div', { class: 'actions sticky-actions' });
  const buttons = () => [...panel.querySelectorAll('.actions button, .forms button')];

  async function vote(kind, message) {
    fill(msg);
    for (const b of buttons()) b.disabled = true;
    try {
      const now = await api('GET', withTenant(`/v1/approvals?status=pending&session=${encodeURIComponent(first.session || '')}&limit=200`, first.tenant));
      const pendingNow = now.filter((a) => a.batch === first.batch && a.tenant === first.tenant);
      const still = pendingNow.map((a) => a.id).sort();
      if (now.length >= 200 || still.join() !== ids.join()) {
        fill(msg, h('p', { class: 'notice error' }, `This turn changed since it was shown (${still.length} pending now): nothing was voted. Look again.`));
        onDone && onDone();
        return;
      }
      if (kind === 'approve' && pendingNow.map((a) => `${a.id}@${revisionOf(a)}`).sort().join() !== seen.join()) {
        fill(msg, h('p', { class: 'notice error' }, h('strong', {}, 'Changed since you looked: review again. '), 'An action of this turn was edited since it was shown: nothing was voted.'));
        onDone && onDone();
        return;
      }
      // The server votes only if the turn still holds exactly the
      // approvals shown, each in the version shown (409 otherwise):
      // nothing that arrives or changes between the look above and the
      // vote is approved unseen.
      const body = { vote: kind, approvals: seen };
      if (message) body.message = message;
      if (isAllTenants()) body.tenant = first.tenant;
      let res;
      try {
        res = await api('POST', `/v1/batches/${encodeURIComponent(first.batch)}/votes`, body);
      } catch (e) {
        if (e.status !== 409) throw e;
        fill(msg, h('p', { class: 'notice error' }, h('strong', {}, 'Changed since you looked: review again. '), `This turn changed since it was shown: nothing was voted. (${e.message})`));
        onDone && onDone();
        return;
      }
      const unseen = res.filter((a) => !ids.includes(a.id));
      const open = res.filter((a) => a.status === 'pending').length;
      const said = `${kind === 'approve' ? 'Approved' : 'Rejected'} ${res.length} action${res.length === 1 ? '' : 's'} of ${first.agent}'s turn ${first.batch}` +
        (open ? `; ${open} still pending: they need more approvals` : '') + '.';
      toast(said);
      fill(msg, unseen.length
        ? h('p', { class: 'notice error' }, `rein also counted ${unseen.length} action${unseen.length === 1 ? '' : 's'} of this turn that arrived after it was shown: `,
          unseen.map((a) => [link('/approvals/' + encodeURIComponent(a.id), a.id, a.tenant), ' ']), 'check ', unseen.length === 1 ? 'it' : 'them', ' now.')
        : h('p', { class: 'notice' }, said));
      if (!unseen.length) dropDraft('reject-turn:' + first.batch);
      onDone && onDone();
    } catch (e) {
      fill(msg, errorBox(e));
      restoreButtons(buttons());
    }
  }

  // An approval that needs step-up takes an approving vote only with the
  // voter's passkey confirmation of that approval: approve those one by one.
  const stepUp = list.some((a) => a.step_up);
  const approveAll = stepUp ? null : risky
    ? holdButton(`Hold to approve all ${n}`, { class: 'primary approve-all hold', title: 'Press and hold to approve every action of this turn', 'aria-label': `Hold to approve all ${n}: press and hold, or hold Enter` }, () => vote('approve'))
    : h('button', { class: 'primary approve-all', type: 'button', onclick: () => vote('approve') }, `Approve all ${n}`);
  const rejectAll = h('button', { class: 'danger reject-all', type: 'button', onclick: () => {
    const text = trackDraft(h('textarea', { class: 'reject-message', rows: 2, placeholder: 'Why? Each agent receives this message.', 'aria-label': 'Rejection message for the whole turn' }), 'reject-turn:' + first.batch);
    fill(forms, h('div', { class: 'form' }, text, h('div', { class: 'row' },
      h('button', { class: 'danger confirm-reject-all', type: 'button', onclick: () => vote('reject', text.value.trim()) }, `Confirm: reject all ${n}`),
      h('button', { type: 'button', class: 'cancel', onclick: () => fill(forms) }, 'Cancel'))));
    text.focus();
  } }, `Reject all ${n}…`);
  fill(actions, approveAll, rejectAll);
  if (changed) fill(msg, h('p', { class: 'notice changed-notice' }, h('strong', {}, 'Changed since you looked: review again. '), 'The actions of this turn or their versions changed since it was shown.'));
  panel.append(stepUp ? h('p', { class: 'muted' }, 'An approval in this turn needs your passkey: approve them one by one below; rejecting all needs none.')
    : risky ? h('p', { class: 'muted' }, 'A destructive or money-moving action is in this turn: approving all needs a press and hold.') : null, actions, forms, msg);
  return { el: panel, key: turnKey(list) };
}
