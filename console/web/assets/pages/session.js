// Session: one session's counters and the timeline of its checks, with the
// approvals behind them (votes) and the results agents reported. A
// contained session (rein run, rein exec) shows live what runs, where, its
// boundary checks (net.connect) and the destinations waiting for people.
// Admins can stop the session (a lock: a contained run is killed, every
// process of it) and let it run again.
import { h, ruleAndReason, fill, api, tq, pageTenant, ago, badge, tags, link, jsonView, errorBox, toast, fmtTime, live, debounce, serial, hasRole } from '../lib.js';
import { approvalCard } from '../cards.js';

export async function render(main, { who, arg }) {
  const id = arg;
  const stats = h('div', { class: 'stats', id: 'session-stats' });
  const lockBox = h('div', { id: 'session-lock' });
  const box = h('section', { id: 'containment', hidden: true, 'aria-label': 'Containment' });
  const boundary = h('section', { id: 'boundary', hidden: true, 'aria-label': 'Boundary' });
  let contained = null; // the session's sandbox, as rein last said
  const timeline = h('ol', { class: 'timeline', id: 'timeline' });
  const err = h('div');
  const state = h('span', { class: 'live-state' });
  fill(main, h('div', { class: 'page-head' }, h('h1', {}, 'Session ', h('code', {}, id)), state), err, stats, box, lockBox, boundary, timeline);
  const tenant = pageTenant();

  async function load() {
    try {
      const [s, checks, approvals] = await Promise.all([
        api('GET', tq(`/v1/sessions/${encodeURIComponent(id)}`)).catch((e) => (e.status === 404 ? null : Promise.reject(e))),
        api('GET', tq(`/v1/sessions/${encodeURIComponent(id)}/checks?limit=200`)),
        api('GET', tq(`/v1/approvals?session=${encodeURIComponent(id)}&limit=200`)),
      ]);
      fill(err);
      renderStats(s, checks);
      contained = s && s.sandbox ? s.sandbox : null;
      renderContainment(contained);
      renderBoundary(checks, approvals);
      const byCheck = new Map(approvals.map((a) => [a.check_id, a]));
      const byID = new Map(approvals.map((a) => [a.id, a]));
      fill(timeline, checks.length ? checks.map((c) => item(c, byCheck.get(c.id) || (c.approval && byID.get(c.approval.id)))) : h('li', {}, 'No checks in this session.'));
      if (hasRole(who, 'admin')) await renderLock();
    } catch (e) {
      fill(err, errorBox(e));
    }
  }

  function renderStats(s, checks) {
    const stat = (v, label) => h('div', { class: 'stat' }, h('b', {}, String(v)), h('span', {}, label));
    if (!s) {
      fill(stats, stat(checks.length, 'checks'));
      return;
    }
    fill(stats, stat(s.checks ?? checks.length, 'checks'), stat(s.calls, 'allowed'), stat(s.denials ?? 0, 'denied'),
      stat(Number(s.cost || 0).toFixed(4).replace(/\.?0+$/, ''), 'cost'), stat(s.tainted ? 'yes' : 'no', 'tainted'),
      h('div', { class: 'stat' }, h('b', {}, s.agent || '—'), h('span', {}, 'agent')),
      h('div', { class: 'stat' }, h('b', {}, ago(s.started_at)), h('span', {}, 'started')),
      h('div', { class: 'stat' }, h('b', {}, ago(s.last_at)), h('span', {}, 'last check')));
  }

  // What runs contained, where, and whether it still runs.
  function renderContainment(sb) {
    box.hidden = !sb;
    if (!sb) return;
    const running = !sb.ended_at;
    const state = running ? h('span', { class: 'badge ask', id: 'run-state' }, '● running')
      : h('span', { class: 'badge ' + (sb.stopped_by ? 'deny' : 'allow'), id: 'run-state' },
        sb.stopped_by ? `stopped (exit ${sb.exit_status})` : `ended (exit ${sb.exit_status})`);
    fill(box, h('h2', {}, sb.runner === 'exec' ? 'Run by rein (rein exec) ' : 'Contained run ', state),
      h('dl', { class: 'facts' },
        h('dt', {}, 'Command'), h('dd', {}, h('code', { id: 'run-command' }, (sb.command || []).join(' '))),
        h('dt', {}, 'Workspace'), h('dd', {}, h('code', { id: 'run-workspace' }, sb.workspace)),
        h('dt', {}, 'Profile'), h('dd', { id: 'run-profile' }, sb.profile, ' ', h('span', { class: 'muted' }, `files: ${sb.fs}, network: ${sb.net}`)),
        h('dt', {}, 'Started'), h('dd', {}, ago(sb.started_at)),
        sb.ended_at ? [h('dt', {}, 'Ended'), h('dd', {}, ago(sb.ended_at), sb.stopped_by ? [' — stopped by lock ', h('code', {}, sb.stopped_by)] : '')] : null,
        h('dt', { class: 'extra' }, 'Kernel'), h('dd', { class: 'extra muted' }, sb.features)));
  }

  // The run's boundary crossings: each destination asked for, and those
  // that wait for people now (approvers decide them right here).
  function renderBoundary(checks, approvals) {
    const crossings = checks.filter((c) => c.check.tool === 'net.connect');
    const waiting = approvals.filter((a) => a.tool === 'net.connect' && a.status === 'pending');
    boundary.hidden = !contained && !crossings.length;
    if (boundary.hidden) return;
    const dest = (args) => args ? `${args.host}:${args.port}` : '?';
    const canVote = hasRole(who, 'approver', 'admin');
    fill(boundary, h('h2', {}, 'Boundary'),
      waiting.length ? h('div', { id: 'waiting' }, waiting.map((a) => canVote
        ? approvalCard(a, { who, onResolved: () => refresh(), onChanged: () => refresh() }).el
        : h('p', { class: 'notice' }, h('strong', {}, dest(a.args)), ` from session ${id} waits for approval`)))
        : null,
      crossings.length ? h('ul', { class: 'crossings', id: 'crossings' }, crossings.map((c) => {
        const args = c.check.args || {};
        return h('li', { dataset: { id: c.id } }, badge(c.decision), ' ', h('code', {}, dest(args)), ' ', h('span', { class: 'muted' }, c.reason), ' ', ago(c.created_at));
      })) : h('p', { class: 'muted' }, 'No destination asked for yet.'));
  }

  function item(c, a) {
    return h('li', { class: c.decision, dataset: { id: c.id } },
      h('div', { class: 'tl-head' }, badge(c.decision), h('code', {}, c.check.tool), h('span', { class: 'muted' }, c.check.agent), ago(c.created_at),
        h('span', { class: 'muted' }, '#' + c.audit_index)),
      h('div', { class: 'tl-sub' }, ruleAndReason(c.rule, c.reason)),
      c.check.intent ? h('div', { class: 'tl-sub intent' }, c.check.intent) : null,
      (c.risk || []).length ? h('div', { class: 'tl-sub' }, tags(c.risk)) : null,
      h('details', { class: 'tl-sub' }, h('summary', {}, 'arguments'), jsonView(c.args ?? c.check.args)),
      a ? h('div', { class: 'tl-sub' }, 'approval ', link('/approvals/' + encodeURIComponent(a.id), a.id, a.tenant), ' ', badge(a.status),
        (a.votes || []).length ? h('ul', { class: 'votes-list' }, a.votes.map((v) => h('li', {}, h('strong', {}, v.by), ' ', v.vote, v.message ? [': “', v.message, '”'] : '', ' ', ago(v.at)))) : null)
        : c.approval ? h('div', { class: 'tl-sub' }, 'approval ', link('/approvals/' + encodeURIComponent(c.approval.id), c.approval.id, c.tenant), ' ', badge(c.approval.status)) : null,
      c.result ? h('div', { class: 'tl-sub result' }, 'result ', badge(c.result.status), ' ', c.result.summary || '', c.result.cost != null ? ` (cost ${c.result.cost})` : '',
        c.result.executed_by === 'rein' ? h('span', { class: 'executed-by' }, ' — run by rein') : c.result.executed_by ? h('span', { class: 'muted' }, ' — reported by the agent') : null,
        c.result.exit_status != null ? h('div', { class: 'muted' }, `exit status ${c.result.exit_status}`,
          c.result.stdout_sha256 ? [' · stdout ', h('code', { class: 'hash' }, c.result.stdout_sha256), ` (${c.result.stdout_bytes} bytes)`] : '',
          c.result.stderr_sha256 ? [' · stderr ', h('code', { class: 'hash' }, c.result.stderr_sha256), ` (${c.result.stderr_bytes} bytes)`] : '') : null) : null);
  }

  async function renderLock() {
    const locks = (await api('GET', '/v1/locks')).filter((l) => l.target && l.target.session === id && !l.target.agent && !l.target.tool &&
      (!tenant || l.tenant === tenant) && !l.removed_at);
    if (locks.length) {
      fill(lockBox, h('div', { class: 'notice error' }, h('strong', {}, 'Stopped: '), locks[0].reason, ' — by ', locks[0].created_by, ' ', ago(locks[0].created_at), ' ',
        h('button', { id: 'resume', onclick: async () => {
          try {
            for (const l of locks) await api('DELETE', '/v1/locks/' + encodeURIComponent(l.id));
            toast('Session resumed');
            refresh();
          } catch (e) { fill(err, errorBox(e)); }
        } }, 'Resume')));
      return;
    }
    const reason = h('input', { id: 'stop-reason', placeholder: 'Why? (shown to the agent)', 'aria-label': 'Reason to stop' });
    const runs = contained && !contained.ended_at;
    fill(lockBox, h('div', { class: 'row' },
      h('button', { class: 'danger', id: 'stop', onclick: async () => {
        try {
          const body = { target: { session: id }, reason: reason.value.trim() || `stopped from the console by ${who.name}` };
          if (tenant) body.tenant = tenant;
          await api('POST', '/v1/locks', body);
          toast(runs ? 'Stopped: every process of the run is being killed, and every check in the session is denied' : 'Session stopped: every check in it is denied');
          refresh();
          if (runs) setTimeout(refresh, 1500); // the run ends within about a second
        } catch (e) { fill(err, errorBox(e)); }
      } }, runs ? 'Stop: end every process' : 'Stop this session'), reason));
  }

  // One load at a time (see serial), and a load each time the stream
  // opens for what happened before it.
  const refresh = serial(load);
  await refresh();
  const reload = debounce(refresh, 250);
  // A run's end makes no event: while one runs, ask whether it still does.
  setInterval(async () => {
    if (!contained || contained.ended_at) return;
    const st = await api('GET', tq(`/v1/sessions/${encodeURIComponent(id)}/sandbox`)).catch(() => null);
    if (st && st.sandbox && st.sandbox.ended_at) reload();
  }, 2000);
  live(['decision', 'approval.updated', 'lock.updated'], (t, d) => { if (t === 'lock.updated' || t === 'opened' || !d || !d.session || d.session === id) reload(); },
    (s) => { state.textContent = s === 'live' ? '● live' : '○ reconnecting…'; state.className = 'live-state ' + s; });
}

export { fmtTime };
