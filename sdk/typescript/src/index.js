// rein client for JavaScript and TypeScript: checks, approvals, questions.
// It needs nothing beyond the global fetch (Node.js 22+, Deno, Bun, browsers).

/** A non-2xx answer from rein, with the API's error code and message. */
export class ReinError extends Error {
  constructor(status, code, message, problems) {
    super(`rein: ${code} (${status}): ${message}`);
    this.name = "ReinError";
    this.status = status;
    this.code = code;
    this.problems = problems ?? [];
  }
}

/**
 * rein did not let an action run: deny (policy, lock, or a rejected or
 * expired approval), throttle, or an approval still pending when the wait ended.
 */
/**
 * The arguments an allow says to run. rein always sends them; an allow
 * without an arguments object is refused, never run with the caller's own.
 */
export function runArgs(answer, check = answer) {
  const a = answer.args;
  if (a === null || typeof a !== "object" || Array.isArray(a)) {
    throw new DeniedError({ decision: "deny", reason: "rein allowed the action but sent no arguments to run, so it does not run",
      rule: check.rule, checkId: check.id, approvalId: check.approval?.id });
  }
  return a;
}

export class DeniedError extends Error {
  constructor(fields) {
    super(`rein: ${fields.decision}: ${fields.reason}`);
    this.name = "DeniedError";
    this.decision = fields.decision;
    this.reason = fields.reason;
    this.rule = fields.rule ?? "";
    this.checkId = fields.checkId ?? "";
    this.approvalId = fields.approvalId ?? "";
    this.approval = fields.approval;
    this.retryAfterMs = fields.retryAfterMs;
  }
  /** True when the approval is still pending: asking again later may run it. */
  get pending() {
    return this.decision === "ask";
  }
}

/** A question that expired, was cancelled, or is still pending when the wait ended. */
export class UnansweredError extends Error {
  constructor(question) {
    super(`rein: question ${question.id} was not answered (${question.status})`);
    this.name = "UnansweredError";
    this.question = question;
  }
}

const MAX_WAIT_MS = 300000;
const WAIT_SLICE_MS = 60000;

function env(name) {
  return typeof process !== "undefined" ? process.env?.[name] : undefined;
}

function sleep(ms, signal) {
  return new Promise((resolve) => {
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });
}

function query(q) {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(q ?? {})) {
    if (v !== undefined && v !== null && v !== "") p.set(k, String(v));
  }
  const s = p.toString();
  return s ? "?" + s : "";
}

const allows = (d) => d === "allow" || d === "modify";

/** A client of one rein server with one key. */
export class ReinClient {
  /**
   * @param {object} [options]
   * @param {string} [options.server] rein's address (default REIN_SERVER, then http://127.0.0.1:8750)
   * @param {string} [options.key] the API key (default REIN_KEY)
   * @param {typeof fetch} [options.fetch]
   */
  constructor(options = {}) {
    this.server = (options.server ?? env("REIN_SERVER") ?? "http://127.0.0.1:8750").replace(/\/+$/, "");
    this.key = options.key ?? env("REIN_KEY") ?? "";
    this.fetch = options.fetch ?? globalThis.fetch.bind(globalThis);
  }

  async request(method, path, body, { signal } = {}) {
    const headers = { accept: "application/json" };
    if (this.key) headers.authorization = `Bearer ${this.key}`;
    if (body !== undefined) headers["content-type"] = "application/json";
    let resp;
    try {
      resp = await this.fetch(this.server + path, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal,
      });
    } catch (err) {
      if (signal?.aborted) throw signal.reason ?? err;
      throw new Error(`rein at ${this.server}: ${err?.cause?.message ?? err.message}`, { cause: err });
    }
    const text = await resp.text();
    if (!resp.ok) {
      let e;
      try {
        e = JSON.parse(text).error;
      } catch {}
      if (e?.code) throw new ReinError(resp.status, e.code, e.message, e.problems);
      throw new ReinError(resp.status, `http_${resp.status}`, text.trim());
    }
    if (resp.status === 204 || text === "") return undefined;
    try {
      return JSON.parse(text);
    } catch (err) {
      throw new Error(`rein at ${this.server}: unexpected answer: ${text.slice(0, 200)}`, { cause: err });
    }
  }

  /** Asks rein whether an action may run (POST /v1/check). */
  check(req, opts) {
    return this.request("POST", "/v1/check", { args: {}, ...req }, opts);
  }

  /** The stored check (GET /v1/checks/{id}). */
  getCheck(id, opts) {
    return this.request("GET", `/v1/checks/${encodeURIComponent(id)}`, undefined, opts);
  }

  /** Reports what happened after an allowed action. */
  report(checkId, result, opts) {
    return this.request("POST", `/v1/checks/${encodeURIComponent(checkId)}/result`, result, opts);
  }

  /**
   * One long-poll of an approval as the agent that asked. When it is
   * approved the answer is decision "allow" with the args to run, and the
   * grant is used up; "ask" means still pending.
   */
  wait(approvalId, { timeoutMs = 30000, signal } = {}) {
    const t = Math.max(0, Math.min(MAX_WAIT_MS, Math.floor(timeoutMs)));
    return this.request("GET", `/v1/approvals/${encodeURIComponent(approvalId)}/wait?timeout_ms=${t}`, undefined, { signal });
  }

  /**
   * Waits until an approval is resolved (or timeoutMs passes, or signal
   * aborts) and returns the outcome as wait() does: allow with args, deny
   * with the reason, or ask if it is still pending.
   */
  async waitDecision(approvalId, { timeoutMs = Infinity, signal } = {}) {
    const end = Date.now() + timeoutMs;
    let last;
    for (;;) {
      const left = end - Date.now();
      if (signal?.aborted || left <= 0) break;
      try {
        last = await this.wait(approvalId, { timeoutMs: Math.min(left, WAIT_SLICE_MS), signal });
      } catch (err) {
        if (signal?.aborted) break;
        throw err;
      }
      if (last.decision !== "ask") return last;
    }
    if (!last) {
      const a = await this.approval(approvalId);
      last = { ...a, decision: a.status === "pending" ? "ask" : "deny", reason: "still pending: " + a.reason };
    }
    return last;
  }

  /**
   * Checks an action and runs fn(args) only when rein allows it, with the
   * arguments to run (the policy's modification or an approver's edit
   * included). When rein asks, it calls onAsk(checkResponse) (to tell
   * someone where to approve) and waits for the approval. Anything else
   * throws a DeniedError.
   */
  async guard(tool, args, fn, options = {}) {
    const { timeoutMs, signal, onAsk, ...rest } = options;
    const res = await this.check({ ...rest, tool, args }, { signal });
    if (res.decision === "ask" && res.approval && onAsk) await onAsk(res);
    const run = await this.decide(res, { timeoutMs, signal });
    return fn(run, res);
  }

  /** Turns a check answer into the args to run, waiting when it is ask; throws DeniedError otherwise. */
  async decide(res, { timeoutMs, signal } = {}) {
    if (allows(res.decision)) return runArgs(res);
    if (res.decision === "ask" && res.approval) {
      const w = await this.waitDecision(res.approval.id, { timeoutMs, signal });
      if (w.decision === "allow") return runArgs(w, res);
      throw new DeniedError({ decision: w.decision, reason: w.reason, rule: res.rule, checkId: res.id,
        approvalId: res.approval.id, approval: w });
    }
    throw new DeniedError({ decision: res.decision === "ask" ? "deny" : res.decision, reason: res.reason, rule: res.rule,
      checkId: res.id, approvalId: res.approval?.id, retryAfterMs: res.retry_after_ms ?? undefined });
  }

  /** Lists approvals, newest first (approver, admin, auditor). */
  approvals(q, opts) {
    return this.request("GET", "/v1/approvals" + query(q), undefined, opts);
  }

  /** One approval (approvers, or the agent that asked). */
  approval(id, opts) {
    return this.request("GET", `/v1/approvals/${encodeURIComponent(id)}`, undefined, opts);
  }

  /** Votes on an approval: approve, reject, or edit with the edited args. */
  vote(id, { vote, message = "", args }, opts) {
    const body = { vote, message };
    if (args !== undefined) body.args = args;
    return this.request("POST", `/v1/approvals/${encodeURIComponent(id)}/votes`, body, opts);
  }

  approve(id, message = "", opts) {
    return this.vote(id, { vote: "approve", message }, opts);
  }

  reject(id, message = "", opts) {
    return this.vote(id, { vote: "reject", message }, opts);
  }

  edit(id, args, message = "", opts) {
    return this.vote(id, { vote: "edit", message, args }, opts);
  }

  /** Withdraws a pending approval (the agent that asked, admin). */
  cancel(id, opts) {
    return this.request("POST", `/v1/approvals/${encodeURIComponent(id)}/cancel`, undefined, opts);
  }

  /**
   * Waits until an approval leaves pending, without using its grant (it
   * re-reads the approval every intervalMs), and returns it; or returns it
   * still pending when timeoutMs passes or signal aborts. Adapters use it to
   * learn an outcome that the tool call itself will then redeem.
   */
  async settled(id, { timeoutMs = Infinity, intervalMs = 250, signal } = {}) {
    const end = Date.now() + timeoutMs;
    for (;;) {
      const a = await this.approval(id, { signal });
      if (a.status !== "pending" || Date.now() >= end || signal?.aborted) return a;
      await sleep(Math.min(intervalMs, Math.max(0, end - Date.now())), signal);
    }
  }

  /** Puts a question to people (POST /v1/questions). */
  ask(req, opts) {
    return this.request("POST", "/v1/questions", req, opts);
  }

  questions(q, opts) {
    return this.request("GET", "/v1/questions" + query(q), undefined, opts);
  }

  question(id, opts) {
    return this.request("GET", `/v1/questions/${encodeURIComponent(id)}`, undefined, opts);
  }

  /** Answers a question: text, one of its choices, or an object for a form. */
  answer(id, answer, opts) {
    return this.request("POST", `/v1/questions/${encodeURIComponent(id)}/answer`, { answer }, opts);
  }

  /** One long-poll of a question as the agent that asked. */
  waitQuestion(id, { timeoutMs = 30000, signal } = {}) {
    const t = Math.max(0, Math.min(MAX_WAIT_MS, Math.floor(timeoutMs)));
    return this.request("GET", `/v1/questions/${encodeURIComponent(id)}/wait?timeout_ms=${t}`, undefined, { signal });
  }

  /** Waits for the answer; throws UnansweredError if it expires, is cancelled or the wait ends. */
  async waitAnswer(id, { timeoutMs = Infinity, signal } = {}) {
    const end = Date.now() + timeoutMs;
    let q;
    for (;;) {
      const left = end - Date.now();
      if (signal?.aborted || left <= 0) break;
      try {
        q = await this.waitQuestion(id, { timeoutMs: Math.min(left, WAIT_SLICE_MS), signal });
      } catch (err) {
        if (signal?.aborted) break;
        throw err;
      }
      if (q.status !== "pending") break;
    }
    q ??= await this.question(id);
    if (q.status === "answered") return q.answer;
    throw new UnansweredError(q);
  }

  /** Asks and waits for the answer. */
  async askAndWait(req, opts) {
    const q = await this.ask(req);
    return this.waitAnswer(q.id, opts);
  }

  cancelQuestion(id, opts) {
    return this.request("POST", `/v1/questions/${encodeURIComponent(id)}/cancel`, undefined, opts);
  }
}
