// rein for LangGraph.js and LangChain.js agents: tools that ask rein before
// they run, and pause the graph with a human-in-the-loop interrupt (shaped
// like LangChain's humanInTheLoopMiddleware requests) when rein asks.
import { tool as lcTool } from "@langchain/core/tools";
import { interrupt } from "@langchain/langgraph";
import { DeniedError } from "./index.js";
import { allows, checkOnce, refusal, rejectionOf, requestId, sameJSON, sessionOf, UsedChecks } from "./adapter.js";

const ALLOWED = ["approve", "edit", "reject"];

/**
 * Wraps a LangChain tool so that every call is checked by rein first:
 * allow/modify run the tool (with rein's arguments), deny/throttle return
 * the reason to the model without running it, and ask pauses the graph
 * with interrupt(). Resume with reinResume() (rein's outcome), or with
 * your own HITL decisions: the tool still runs only with a grant from rein.
 */
export function reinTool(client, inner, options = {}) {
  const reinName = options.toolName ?? inner.name;
  const used = new UsedChecks();
  return lcTool(
    async (input, config = {}) => {
      const { toolCall, ...innerConfig } = config;
      const session = sessionOf(options.session ?? ((c) => c?.configurable?.thread_id), config);
      const res = await checkOnce(client, used, {
        tool: reinName,
        args: input,
        session,
        agent: options.agent,
        intent: options.intent,
        labels: options.labels,
        request_id: await requestId("langgraph", session, toolCall?.id),
      });
      const refuse = (decision, reason, retry) => (options.refusal ?? refusal)(reinName, decision, reason, retry);
      if (allows(res.decision)) {
        used.add(res.id);
        return inner.invoke(res.args, innerConfig);
      }
      if (res.decision !== "ask" || !res.approval) return refuse(res.decision, res.reason, res.retry_after_ms);

      const approvalId = res.approval.id;
      const response = interrupt({
        actionRequests: [{
          name: inner.name,
          args: input,
          description: `${res.reason}\n\nTool: ${inner.name}\nArgs: ${JSON.stringify(input, null, 2)}\nApproval: ${res.approval.url}`,
        }],
        reviewConfigs: [{ actionName: inner.name, allowedDecisions: ALLOWED }],
        rein: {
          approvalId,
          checkId: res.id,
          tool: reinName,
          reason: res.reason,
          rule: res.rule,
          url: res.approval.url,
          expiresAt: res.approval.expires_at,
        },
      });
      const decision = Array.isArray(response?.decisions) ? response.decisions[0] : response;
      switch (decision?.type) {
        case "reject": {
          const a = await client.approval(approvalId);
          if (a.status === "pending") await client.cancel(approvalId).catch(() => {});
          return decision.message ?? (a.status === "rejected" ? rejectionOf(a) : `the call to ${inner.name} was rejected`);
        }
        case "approve":
        case "edit": {
          // The resume value chooses; rein's grant decides. An edit must be
          // the one approved in rein, or nothing runs.
          if (decision.type === "edit") {
            const a = await client.approval(approvalId);
            const approved = a.approved_args ?? a.args;
            if (a.status === "approved" && !sameJSON(decision.editedAction?.args, approved)) {
              return `the edited arguments differ from those approved in rein (approval ${approvalId}); the call did not run`;
            }
          }
          const w = await client.wait(approvalId, { timeoutMs: options.resumeWaitMs ?? 0 });
          if (w.decision === "allow") return inner.invoke(w.args, innerConfig);
          return refuse(w.decision, w.reason);
        }
        default:
          throw new Error(`rein: resume ${inner.name} with a HITL response ({decisions: [{type: "approve" | "edit" | "reject"}]}); got ${JSON.stringify(response)}`);
      }
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

/** rein's approval as a LangChain HITL decision. */
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
