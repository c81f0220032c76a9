import type { AgentMiddleware } from "langchain";
import type { ReinClient } from "./index.js";
import type { ReinToolOptions } from "./langgraph.js";

export { reinResume, isReinInterrupt, hitlDecision, type HITLDecision, type HITLResponse, type ReinHITLRequest } from "./langgraph.js";

export interface ReinMiddlewareOptions extends Omit<ReinToolOptions, "toolName"> {
  /** The name rein sees for a tool: a function of its name, or a record; default the tool's own name. */
  toolName?: ((name: string) => string) | Record<string, string>;
  /** Only these tools go through rein; default all of the agent's tools. */
  tools?: string[];
  /** The middleware's name (default "ReinMiddleware"). */
  name?: string;
}

/** A LangChain agent middleware: every tool call is decided by rein first. */
export function reinMiddleware(client: ReinClient, options?: ReinMiddlewareOptions): AgentMiddleware;
