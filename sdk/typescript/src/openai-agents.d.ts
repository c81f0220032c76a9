import type { FunctionTool, RunContext, RunToolApprovalItem, ToolInputParameters, ToolOptions, ToolOutputSchema } from "@openai/agents";
import type { Approval, ReinClient, WaitOptions } from "./index.js";

export interface ReinAgentsToolOptions {
  /** The tool name rein sees; default the tool's own name. */
  toolName?: string;
  /** The session of each check: a string, or a function of the run context. */
  session?: string | ((runContext: RunContext<any>) => string | undefined);
  agent?: string;
  intent?: string;
  labels?: Record<string, string>;
  /** How long an approved call waits for rein's grant (default 0: it must already be decided). */
  resumeWaitMs?: number;
  /** What the model reads when a call does not run. */
  refusal?: (tool: string, decision: string, reason: string, retryAfterMs?: number | null) => string;
}

/** Takes the same definition as tool() of @openai/agents (its needsApproval is rein's). */
export function reinTool<P extends ToolInputParameters = undefined, C = unknown, O extends ToolOutputSchema | undefined = undefined>(
  client: ReinClient,
  definition: ToolOptions<P, C, O>,
  options?: ReinAgentsToolOptions,
): FunctionTool<C, any, any>;

export interface AppliedDecision {
  item: RunToolApprovalItem;
  approval: Approval;
  approved: boolean;
  message?: string;
}

export function applyReinDecisions(
  client: ReinClient,
  result: { state: { approve(item: RunToolApprovalItem): void; reject(item: RunToolApprovalItem, options?: { message?: string }): void }; interruptions?: RunToolApprovalItem[] },
  options?: WaitOptions & { intervalMs?: number },
): Promise<AppliedDecision[]>;
