export type Decision = "allow" | "deny" | "ask" | "throttle" | "modify";
export type Args = Record<string, unknown>;

export interface CheckRequest {
  tool: string;
  args?: Args;
  session?: string;
  agent?: string;
  intent?: string;
  labels?: Record<string, string>;
  cost?: number;
  request_id?: string;
  wait_ms?: number;
}

export interface ApprovalRef {
  id: string;
  status: string;
  expires_at: string;
  quorum: number;
  approvals: number;
  url: string;
}

export interface CheckResponse {
  id: string;
  decision: Decision;
  reason: string;
  rule: string;
  policy_version: string;
  risk: string[];
  action_hash: string;
  /** The arguments to execute with (changed by modify, or an approver's edit). */
  args: Args;
  approval: ApprovalRef | null;
  retry_after_ms: number | null;
  audit_index: number;
}

export type ApprovalStatus = "pending" | "approved" | "rejected" | "expired" | "cancelled" | "invalidated" | "consumed";

export interface Vote {
  by: string;
  vote: "approve" | "reject" | "edit";
  message: string;
  args?: Args;
  at: string;
}

export interface Approval {
  id: string;
  tenant: string;
  status: ApprovalStatus;
  check_id: string;
  action_hash: string;
  agent: string;
  session: string;
  tool: string;
  args: Args;
  intent: string;
  risk: string[];
  rule: string;
  reason: string;
  approvers: string[];
  quorum: number;
  votes: Vote[] | null;
  approved_args: Args | null;
  created_at: string;
  expires_at: string;
  resolved_at: string | null;
  grant_expires_at: string | null;
  consumed_at: string | null;
}

/** The answer of a wait: the approval, and what the waiting agent may do. */
export interface WaitResult extends Omit<Approval, "args"> {
  decision: "allow" | "deny" | "ask";
  reason: string;
  /** With allow: the arguments to run. */
  args: Args;
}

export interface ListQuery {
  status?: string;
  session?: string;
  agent?: string;
  tenant?: string;
  cursor?: string;
  limit?: number;
}

export interface QuestionRequest {
  text: string;
  session?: string;
  agent?: string;
  choices?: string[];
  schema?: Record<string, unknown>;
  ask?: string[];
  ttl_ms?: number;
}

export interface Question {
  id: string;
  tenant: string;
  status: "pending" | "answered" | "expired" | "cancelled";
  agent: string;
  session: string;
  text: string;
  choices: string[] | null;
  schema: Record<string, unknown> | null;
  ask: string[] | null;
  answer: unknown;
  answered_by: string;
  created_at: string;
  expires_at: string;
  resolved_at: string | null;
}

export interface CheckResult {
  status: "succeeded" | "failed";
  summary?: string;
  cost?: number;
}

export interface RequestOptions {
  signal?: AbortSignal;
}

export interface WaitOptions {
  timeoutMs?: number;
  signal?: AbortSignal;
}

export interface ClientOptions {
  /** rein's address; default REIN_SERVER, then http://127.0.0.1:8750. */
  server?: string;
  /** The API key; default REIN_KEY. */
  key?: string;
  fetch?: typeof fetch;
}

export interface Problem {
  rule?: string;
  line?: number;
  message: string;
}

export class ReinError extends Error {
  readonly status: number;
  /** bad_request, unauthenticated, forbidden, not_found, conflict, gone, too_large, unavailable, ... */
  readonly code: string;
  readonly problems: Problem[];
}

/**
 * The arguments an allow says to run (a check answer's or a wait's `args`).
 * rein always sends them; an allow without an arguments object throws a
 * DeniedError rather than running the caller's own arguments.
 */
export function runArgs(answer: { args?: unknown }, check?: { id?: string; rule?: string; approval?: { id: string } | null }): Record<string, unknown>;

export class DeniedError extends Error {
  readonly decision: "deny" | "throttle" | "ask";
  readonly reason: string;
  readonly rule: string;
  readonly checkId: string;
  readonly approvalId: string;
  /** The approval as it was when the wait ended, when the decision came from one. */
  readonly approval?: WaitResult;
  readonly retryAfterMs?: number;
  /** True when the approval is still pending: asking again later may run it. */
  readonly pending: boolean;
}

export class UnansweredError extends Error {
  readonly question: Question;
}

export type GuardOptions = Omit<CheckRequest, "tool" | "args"> &
  WaitOptions & {
    /** Called when rein asks, before waiting: e.g. to show the approval's URL. */
    onAsk?: (check: CheckResponse) => void | Promise<void>;
  };

export class ReinClient {
  constructor(options?: ClientOptions);
  readonly server: string;
  readonly key: string;

  check(req: CheckRequest, opts?: RequestOptions): Promise<CheckResponse>;
  getCheck(id: string, opts?: RequestOptions): Promise<CheckResponse & Record<string, unknown>>;
  report(checkId: string, result: CheckResult, opts?: RequestOptions): Promise<void>;

  wait(approvalId: string, opts?: WaitOptions): Promise<WaitResult>;
  waitDecision(approvalId: string, opts?: WaitOptions): Promise<WaitResult>;
  guard<T>(tool: string, args: Args, fn: (args: Args, check: CheckResponse) => T | Promise<T>, opts?: GuardOptions): Promise<T>;
  decide(res: CheckResponse, opts?: WaitOptions): Promise<Args>;

  approvals(q?: ListQuery, opts?: RequestOptions): Promise<Approval[]>;
  approval(id: string, opts?: RequestOptions): Promise<Approval>;
  vote(id: string, vote: { vote: "approve" | "reject" | "edit"; message?: string; args?: Args }, opts?: RequestOptions): Promise<Approval>;
  approve(id: string, message?: string, opts?: RequestOptions): Promise<Approval>;
  reject(id: string, message?: string, opts?: RequestOptions): Promise<Approval>;
  edit(id: string, args: Args, message?: string, opts?: RequestOptions): Promise<Approval>;
  cancel(id: string, opts?: RequestOptions): Promise<Approval>;
  settled(id: string, opts?: WaitOptions & { intervalMs?: number }): Promise<Approval>;

  ask(req: QuestionRequest, opts?: RequestOptions): Promise<Question>;
  questions(q?: ListQuery, opts?: RequestOptions): Promise<Question[]>;
  question(id: string, opts?: RequestOptions): Promise<Question>;
  answer(id: string, answer: unknown, opts?: RequestOptions): Promise<Question>;
  waitQuestion(id: string, opts?: WaitOptions): Promise<Question>;
  waitAnswer(id: string, opts?: WaitOptions): Promise<unknown>;
  askAndWait(req: QuestionRequest, opts?: WaitOptions): Promise<unknown>;
  cancelQuestion(id: string, opts?: RequestOptions): Promise<Question>;
}
