// What the LangGraph.js tools and the LangChain middleware share: one tool
// call checked by rein, paused with one interrupt of its own when rein asks
// (LangChain's human-in-the-loop request, per call), and resumed only with
// rein's grant.
import { interrupt } from "@langchain/langgraph";
import { runArgs } from "./index.js";
import { allows, checkOnce, refusal, rejectionOf, requestId, sameJSON, sessionOf } from "./adapter.js";

/** The decisions a person or app may answer a rein interrupt with. */
export const DECISIONS = ["approve", "edit", "reject", "respond"];

/**
 * Decides one tool call: { args } to run it with (rein's arguments), or
 * { text, status } for the model when it does not run. Pauses the graph
 * with interrupt() when rein asks. Every error reaching rein is a refusal:
 * nothing runs that rein did not allow.
 */
export async function decideCall(client, used, options, call) {
  const { name, input, toolCallId, config } = call;
  const reinName = call.reinName ?? name;
  const refuse = (decision, reason, retry) => ({ text: (options.refusal ?? refusal)(reinName, decision, reason, retry), status: "error" });
  const failed = (err) => ({ text: `rein could not check ${reinName}, so it did not run: ${err?.message ?? err}`, status: "error" });

  let res;
  try {
    const session = sessionOf(options.session ?? ((c) => c?.configurable?.thread_id), config);
    res = await checkOnce(client, used, {
      tool: reinName,
      args: input ?? {},
      session,
      agent: options.agent,
      intent: options.intent,
      labels: options.labels,
      request_id: await requestId("langgraph", session, toolCallId, input ?? {}),
    });
    if (allows(res.decision)) {
      const args = runArgs(res);
      used.add(res.id);
      return { args };
    }
  } catch (err) {
    return failed(err);
  }
  if (res.decision !== "ask" || !res.approval) return refuse(res.decision, res.reason, res.retry_after_ms);

  // Outside any try: interrupt() pauses the graph by throwing.
  const approvalId = res.approval.id;
  const response = interrupt(request(name, reinName, input, toolCallId, res));
  const decision = Array.isArray(response?.decisions) ? response.decisions[0] : response;
  try {
    switch (decision?.type) {
      case "reject":
      case "respond": {
        // The app answers instead of the tool: the call does not run, and
        // rein's pending approval is withdrawn.
        const a = await client.approval(approvalId);
        if (a.status === "pending") await client.cancel(approvalId).catch(() => {});
        if (decision.type === "respond") return { text: String(decision.message ?? ""), status: "success" };
        return { text: decision.message ?? (a.status === "rejected" ? rejectionOf(a) : `the call to ${name} was rejected`), status: "error" };
      }
      case "approve":
      case "edit": {
        // The resume value chooses; rein's grant decides. An edit must be
        // the one approved in rein, or nothing runs.
        if (decision.type === "edit") {
          const a = await client.approval(approvalId);
          const approved = a.approved_args ?? a.args;
          if (a.status === "approved" && !sameJSON(decision.editedAction?.args ?? decision.args, approved)) {
            return { text: `the edited arguments differ from those approved in rein (approval ${approvalId}); the call did not run`, status: "error" };
          }
        }
        const w = await client.wait(approvalId, { timeoutMs: options.resumeWaitMs ?? 0 });
        if (w.decision === "allow") return { args: runArgs(w, res) };
        return refuse(w.decision, w.reason);
      }
      default:
        return { text: `rein: resume ${name} with a HITL decision ({type: "approve" | "edit" | "reject" | "respond"}, or {decisions: [...]}); got ${JSON.stringify(response)}; the call did not run`, status: "error" };
    }
  } catch (err) {
    return failed(err);
  }
}

/**
 * The interrupt's value: LangChain's HITL request for this one call
 * (actionRequests, reviewConfigs), the per-call form (type "tool_approval"
 * with the tool call and the decisions allowed), and rein's approval.
 */
function request(name, reinName, input, toolCallId, res) {
  return {
    type: "tool_approval",
    toolCall: { id: toolCallId, name, args: input },
    allowedDecisions: DECISIONS,
    actionRequests: [{
      name,
      args: input,
      description: `${res.reason}\n\nTool: ${name}\nArgs: ${JSON.stringify(input, null, 2)}\nApproval: ${res.approval.url}`,
    }],
    reviewConfigs: [{ actionName: name, allowedDecisions: DECISIONS }],
    rein: {
      approvalId: res.approval.id,
      checkId: res.id,
      tool: reinName,
      reason: res.reason,
      rule: res.rule,
      url: res.approval.url,
      expiresAt: res.approval.expires_at,
    },
  };
}
