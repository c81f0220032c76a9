import type { Tool, ToolApprovalResponse } from "ai";
import type { ReinClient, WaitOptions } from "./index.js";

export interface ReinAIToolOptions {
  /** The tool name rein sees; default the name in the tools record. */
  toolName?: string;
  /**
   * The session of each check: a string, or a function of the call's
   * options ({ toolCallId, messages, and the tool's context: context in
   * AI SDK 7, experimental_context in AI SDK 6 }).
   */
  session?: string | ((callOptions: { toolCallId?: string; messages?: unknown[]; context?: unknown; experimental_context?: unknown; runtimeContext?: unknown }) => string | undefined);
  agent?: string;
  intent?: string;
  labels?: Record<string, string>;
  /** How long an approved call waits for rein's grant (default 0: it must already be decided). */
  resumeWaitMs?: number;
  /** What the model reads when a call does not run. */
  refusal?: (tool: string, decision: string, reason: string, retryAfterMs?: number | null) => string;
}

export function reinTool<T extends Tool<any, any>>(client: ReinClient, name: string, tool: T, options?: ReinAIToolOptions): T;
export function reinTools<T extends Record<string, Tool<any, any>>>(client: ReinClient, tools: T, options?: ReinAIToolOptions): T;

/** An AI SDK 7 approval status (ToolApprovalStatus of "ai" 7). */
export type ReinToolApprovalStatus =
  | "not-applicable"
  | "user-approval"
  | { type: "user-approval"; reason?: string }
  | { type: "denied"; reason?: string };

/**
 * AI SDK 7's toolApproval (a generic approval function) deciding with rein
 * for the rein tools of tools; other tools keep their own needsApproval.
 */
export function reinToolApproval<T extends Record<string, Tool<any, any>>>(
  tools: T,
): (options: { toolCall: { toolName: string; toolCallId: string; input: unknown }; messages?: unknown[]; toolsContext?: unknown; runtimeContext?: unknown }) => Promise<ReinToolApprovalStatus>;

/** tool-approval-response parts for the tool-approval-request parts among parts (result.content, or messages). */
export function reinApprovalResponses(
  client: ReinClient,
  tools: Record<string, Tool<any, any>>,
  parts: ReadonlyArray<unknown>,
  options?: WaitOptions & { intervalMs?: number; context?: unknown },
): Promise<ToolApprovalResponse[]>;
