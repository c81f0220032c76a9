import type { StructuredToolInterface } from "@langchain/core/tools";
import type { Approval, ReinClient, WaitOptions } from "./index.js";

/** LangChain's HITL decision (humanInTheLoopMiddleware). */
export type HITLDecision =
  | { type: "approve" }
  | { type: "edit"; editedAction: { name: string; args: Record<string, any> } }
  | { type: "reject"; message?: string }
  | { type: "respond"; message: string };

/** LangChain's HITL response, the resume value of an interrupt (a single HITLDecision is accepted too). */
export interface HITLResponse {
  decisions: HITLDecision[];
}

/**
 * The interrupt value, one per tool call: a LangChain HITL request, its
 * per-call form (type "tool_approval"), and rein's approval.
 */
export interface ReinHITLRequest {
  type: "tool_approval";
  toolCall: { id?: string; name: string; args: Record<string, any> };
  allowedDecisions: ("approve" | "edit" | "reject" | "respond")[];
  actionRequests: { name: string; args: Record<string, any>; description?: string }[];
  reviewConfigs: { actionName: string; allowedDecisions: ("approve" | "edit" | "reject" | "respond")[] }[];
  rein: {
    approvalId: string;
    checkId: string;
    tool: string;
    reason: string;
    rule: string;
    url: string;
    expiresAt: string;
  };
}

export interface ReinToolOptions {
  /** The tool name rein sees; default the tool's own name. */
  toolName?: string;
  /** The session of each check; default the graph's thread_id. */
  session?: string | ((config: any) => string | undefined);
  agent?: string;
  intent?: string;
  labels?: Record<string, string>;
  /** How long a resumed call waits for rein's grant (default 0: it must already be decided). */
  resumeWaitMs?: number;
  /** What the model reads when a call does not run. */
  refusal?: (tool: string, decision: string, reason: string, retryAfterMs?: number | null) => string;
}

export function reinTool<T extends StructuredToolInterface>(client: ReinClient, tool: T, options?: ReinToolOptions): StructuredToolInterface;
export function reinTools(client: ReinClient, tools: StructuredToolInterface[], options?: ReinToolOptions): StructuredToolInterface[];
export function isReinInterrupt(intr: { id?: string; value?: unknown }): boolean;
/** Resume values, keyed by interrupt id, for new Command({ resume }). */
export function reinResume(
  client: ReinClient,
  interrupts: { id?: string; value?: unknown }[] | undefined,
  options?: WaitOptions & { intervalMs?: number },
): Promise<Record<string, HITLResponse>>;
export function hitlDecision(approval: Approval, name: string): HITLDecision;
