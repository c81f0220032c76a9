// What the framework adapters share: how a tool call becomes a check, and
// how rein's answers read to a model.

/** True for the decisions that let an action run. */
export const allows = (d) => d === "allow" || d === "modify";

/**
 * A request_id for one tool call of a framework: the same call (retried,
 * or re-run when a paused agent resumes) gets rein's stored answer back
 * instead of a new decision. The call's arguments are part of it: a call
 * id that comes again with other arguments (two nested agents whose models
 * number their calls alike, say) is a call of its own, never one that
 * borrows another call's answer and arguments.
 */
export async function requestId(framework, session, callId, args) {
  if (!callId) return undefined;
  const id = `${framework}:${session ?? ""}:${callId}:${(await sha256(canonical(args ?? {}))).slice(0, 32)}`;
  if (id.length <= 256) return id;
  return `${framework}:sha256:` + (await sha256(id));
}

async function sha256(text) {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

/** What the model reads when a call did not run. */
export function refusal(tool, decision, reason, retryAfterMs) {
  switch (decision) {
    case "throttle":
      return `rein throttled ${tool}: ${reason}` + (retryAfterMs ? ` (retry in ${Math.ceil(retryAfterMs / 1000)} s)` : "");
    case "ask":
      return `rein has not approved ${tool} yet: ${reason}; the call did not run`;
    default:
      return `rein denied ${tool}: ${reason}`;
  }
}

/** The message a rejection reads as: the approver's message when there is one. */
export function rejectionOf(approval) {
  const votes = approval.votes ?? [];
  for (let i = votes.length - 1; i >= 0; i--) {
    const v = votes[i];
    if (v.vote === "reject") return `rejected by ${v.by}` + (v.message ? `: ${v.message}` : "");
  }
  return `the approval was ${approval.status}`;
}

/** Compares two JSON values by content (object key order ignored). */
export function sameJSON(a, b) {
  return canonical(a) === canonical(b);
}

/** A JSON value as text with object keys sorted: equal values, equal text. */
export function canonical(v) {
  if (Array.isArray(v)) return "[" + v.map(canonical).join(",") + "]";
  if (v && typeof v === "object") {
    return "{" + Object.keys(v).sort().map((k) => JSON.stringify(k) + ":" + canonical(v[k])).join(",") + "}";
  }
  return JSON.stringify(v);
}

/** The session a call belongs to: a string, or a function of the framework's context. */
export function sessionOf(session, ...ctx) {
  const s = typeof session === "function" ? session(...ctx) : session;
  return s === undefined || s === null || s === "" ? undefined : String(s);
}

/**
 * The allowed checks a tool wrapper has already run on. A tool call id
 * seen again (a model or framework repeating an old id with the same
 * arguments) would get the stored allow back from rein without a new
 * decision — past a lock or a rate limit set since. Such a call is
 * checked again without the request id instead. Bounded: it remembers the
 * most recent 10,000 checks.
 */
export class UsedChecks {
  #ids = new Set();
  has(id) {
    return this.#ids.has(id);
  }
  add(id) {
    this.#ids.add(id);
    if (this.#ids.size > 10000) this.#ids.delete(this.#ids.values().next().value);
  }
}

/** Runs a check; a stored allow that already ran is decided afresh. */
export async function checkOnce(client, used, req) {
  let res = await client.check(req);
  if (allows(res.decision) && used.has(res.id)) {
    const { request_id, ...fresh } = req;
    res = await client.check(fresh);
  }
  return res;
}
