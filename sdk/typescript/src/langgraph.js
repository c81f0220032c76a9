// rein for LangGraph.js and LangChain.js agents: tools that ask rein before
// they run, and pause the graph with a human-in-the-loop interrupt (shaped
// like LangChain's humanInTheLoopMiddleware requests, one per call) when
// rein asks.
import { tool as lcTool } from "@langchain/core/tools";
import { DeniedError } from "./index.js";
import { rejectionOf, UsedChecks } from "./adapter.js";
import { decideCall } from "./hitl.js";

/**
 * Wraps a LangChain tool so that every call is checked by rein first:
 * allow/modify run the tool (with rein's arguments), deny/throttle return
 * the reason to the model without running it, and ask pauses the graph
 * with interrupt() — one interrupt per call. Resume with reinResume()
 * (rein's outcome), or with your own HITL decisions: the tool still runs
 * only with a grant from rein. For a createAgent agent, reinMiddleware of
 * @reinhq/rein/langchain does the same for all its tools.
 */
export function reinTool(client, inner, options = {}) {
  const used = new UsedChecks();
  return lcTool(
    async (input, config = {}) => {
      const { toolCall, ...innerConfig } = config;
      const out = await decideCall(client, used, options, {
        name: inner.name, reinName: options.toolName, input, toolCallId: toolCall?.id, config,
      });
      return "args" in out ? inner.invoke(out.args, innerConfig) : out.text;
    },
    { name: inner.name, description: inner.description, schema: inner.schema, returnDirect: inner.returnDirect,
      tags: inner.tags, metadata: inner.metadata },
  );
}

/** reinTool for each of tools. */
export function reinTools(client, tools, options) {
  return tools.map((t) => reinTool(client, t, options));
}

/** True when an interrupt's value is a rein approval request. */
export function isReinInterrupt(intr) {
  return typeof intr?.value?.rein?.approvalId === "string";
}

/**
 * Waits until rein resolves the approvals behind a graph's interrupts
 * (result.__interrupt__) and returns the resume value for
 * new Command({ resume }): a map from interrupt id to a HITL response —
 * approve, edit (when the approver edited the arguments) or reject with
 * the approver's message. Throws DeniedError (pending) if timeoutMs passes first.
 */
export async function reinResume(client, interrupts, options = {}) {
  const resume = {};
  for (const intr of interrupts ?? []) {
    if (!isReinInterrupt(intr)) continue;
    const { approvalId } = intr.value.rein;
    const a = await client.settled(approvalId, options);
    resume[intr.id] = { decisions: [hitlDecision(a, intr.value.actionRequests?.[0]?.name ?? a.tool)] };
    if (a.status === "pending") {
      throw new DeniedError({ decision: "ask", reason: `approval ${approvalId} is still pending`, approvalId, checkId: a.check_id });
    }
  }
  return resume;
}

/** rein's approval as a LangChain HITL decision (approve, edit with the approver's arguments, or reject). */
export function hitlDecision(approval, name) {
  switch (approval.status) {
    case "approved":
      return approval.approved_args
        ? { type: "edit", editedAction: { name, args: approval.approved_args } }
        : { type: "approve" };
    case "rejected":
      return { type: "reject", message: rejectionOf(approval) };
    default:
      return { type: "reject", message: `rein approval ${approval.id} was ${approval.status}; the call did not run` };
  }
}
