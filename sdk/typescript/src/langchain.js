// rein for LangChain agents (createAgent of "langchain"): a middleware that
// checks every tool call with rein before it runs. allow and modify run the
// tool with rein's arguments; deny and throttle answer the model with
// rein's reason; ask pauses the agent with one human-in-the-loop interrupt
// per call (like humanInTheLoopMiddleware's per-call mode), resumed with
// reinResume (rein's outcome) or your own decision — and the tool still
// runs only with rein's grant.
import { createMiddleware } from "langchain";
import { ToolMessage } from "@langchain/core/messages";
import { getConfig } from "@langchain/langgraph";
import { UsedChecks } from "./adapter.js";
import { decideCall } from "./hitl.js";

export { reinResume, isReinInterrupt, hitlDecision } from "./langgraph.js";

/**
 * A LangChain middleware (wrapToolCall) that puts every tool call of the
 * agent before rein. options.toolName maps a tool's name to the name rein
 * sees (a function or a record); options.tools limits the middleware to
 * the named tools (default: all of them).
 */
export function reinMiddleware(client, options = {}) {
  const used = new UsedChecks();
  const only = options.tools ? new Set(options.tools) : undefined;
  const reinName = (name) =>
    typeof options.toolName === "function" ? options.toolName(name) : options.toolName?.[name] ?? name;
  return createMiddleware({
    name: options.name ?? "ReinMiddleware",
    wrapToolCall: async (request, handler) => {
      const { toolCall } = request;
      if (only && !only.has(toolCall.name)) return handler(request);
      let config;
      try {
        config = getConfig();
      } catch {
        config = undefined;
      }
      const out = await decideCall(client, used, options, {
        name: toolCall.name, reinName: reinName(toolCall.name), input: toolCall.args, toolCallId: toolCall.id, config,
      });
      if ("args" in out) return handler({ ...request, toolCall: { ...toolCall, args: out.args } });
      return new ToolMessage({ content: out.text, tool_call_id: toolCall.id, name: toolCall.name, status: out.status });
    },
  });
}
