// rein for the Vercel AI SDK (6 and 7): tools that run only with rein's
// arguments, rein's decision as AI SDK 7's toolApproval (or as the tool's
// needsApproval, AI SDK 6), and rein's approval outcomes as
// tool-approval-response parts. It imports nothing from "ai": a tool is a
// plain object in both majors, so one adapter serves whichever is installed.
import { DeniedError, runArgs } from "./index.js";
import { allows, checkOnce, refusal, rejectionOf, requestId, sessionOf, UsedChecks } from "./adapter.js";

const REIN = Symbol.for("rein.ai-sdk.tool");

/**
 * Wraps an AI SDK tool (named name, as in your tools record) so that every
 * call is checked by rein: needsApproval is true exactly when rein asks;
 * execute runs only when rein allows, with rein's arguments (the policy's
 * modification or an approver's edit); a deny or throttle returns the
 * reason to the model as the tool's result.
 */
export function reinTool(client, name, inner, options = {}) {
  const reinName = options.toolName ?? name;
  if (typeof inner.execute !== "function") throw new Error(`rein: tool ${name} has no execute function to guard`);
  const used = new UsedChecks();
  const check = async (input, callOptions) => {
    const session = sessionOf(options.session, callOptions);
    return checkOnce(client, used, {
      tool: reinName,
      args: input ?? {},
      session,
      agent: options.agent,
      intent: options.intent,
      labels: options.labels,
      request_id: await requestId("ai-sdk", session, callOptions?.toolCallId, input ?? {}),
    });
  };
  const refuse = (decision, reason, retry) => (options.refusal ?? refusal)(reinName, decision, reason, retry);
  const t = {
    ...inner,
    needsApproval: async (input, callOptions) => {
      const res = await check(input, callOptions);
      return res.decision === "ask" && !!res.approval;
    },
    execute: async (input, callOptions) => {
      // With the call's id this is rein's stored answer, not a second decision.
      const res = await check(input, callOptions);
      if (allows(res.decision)) {
        used.add(res.id);
        return inner.execute(runArgs(res), callOptions);
      }
      if (res.decision !== "ask" || !res.approval) return refuse(res.decision, res.reason, res.retry_after_ms);
      // Approved in the conversation: the grant from rein decides whether it runs.
      const w = await client.wait(res.approval.id, { timeoutMs: options.resumeWaitMs ?? 0 });
      if (w.decision === "allow") return inner.execute(runArgs(w, res), callOptions);
      return refuse(w.decision, w.reason);
    },
  };
  Object.defineProperty(t, REIN, { value: { check, refuse } });
  return t;
}

/**
 * AI SDK 7's toolApproval for a tools record: pass it as
 * generateText({ tools, toolApproval: reinToolApproval(tools) }) (also
 * streamText and ToolLoopAgent). For a rein tool it is rein's decision:
 * allow and modify run (the tool's execute runs rein's arguments), ask is
 * 'user-approval' with rein's reason, deny and throttle are 'denied' with
 * the reason the model reads. An error reaching rein is 'denied': nothing
 * runs that rein did not allow. Tools that are not rein tools keep their own
 * needsApproval, which a toolApproval function otherwise replaces.
 */
export function reinToolApproval(tools) {
  return async ({ toolCall, messages, toolsContext, runtimeContext }) => {
    const t = Object.hasOwn(tools, toolCall.toolName) ? tools[toolCall.toolName] : undefined;
    const rein = t?.[REIN];
    if (!rein) {
      if (!t) return { type: "denied", reason: `rein: no tool named ${toolCall.toolName}` };
      const needs = typeof t.needsApproval === "function"
        ? await t.needsApproval(toolCall.input, { toolCallId: toolCall.toolCallId, messages, context: toolsContext?.[toolCall.toolName] })
        : t.needsApproval;
      return needs ? "user-approval" : "not-applicable";
    }
    try {
      const res = await rein.check(toolCall.input, { toolCallId: toolCall.toolCallId, messages,
        context: toolsContext?.[toolCall.toolName], runtimeContext });
      if (allows(res.decision)) return "not-applicable";
      if (res.decision === "ask" && res.approval) return { type: "user-approval", reason: res.reason };
      return { type: "denied", reason: rein.refuse(res.decision, res.reason, res.retry_after_ms) };
    } catch (err) {
      return { type: "denied", reason: `rein could not check ${toolCall.toolName}, so it does not run: ${err?.message ?? err}` };
    }
  };
}

/** reinTool for every tool of a tools record ({ name: tool }). */
export function reinTools(client, tools, options) {
  return Object.fromEntries(Object.entries(tools).map(([name, t]) => [name, reinTool(client, name, t, options)]));
}

/**
 * Waits until rein resolves the approvals behind the tool-approval-request
 * parts of a result (result.content, or any list of parts or messages) and
 * returns one tool-approval-response part for each: approved, or denied
 * with the approver's message as reason. Send them back in a tool message:
 * messages.push(...result.response.messages, { role: "tool", content: responses }).
 * Throws DeniedError (pending) if timeoutMs passes first.
 */
export async function reinApprovalResponses(client, tools, parts, options = {}) {
  const responses = [];
  for (const part of flatten(parts)) {
    // AI SDK 7 records its automatic approvals and denials as requests too;
    // they are answered already.
    if (part?.type !== "tool-approval-request" || part.isAutomatic) continue;
    const call = part.toolCall;
    const rein = tools[call?.toolName]?.[REIN];
    if (!rein) continue;
    const res = await rein.check(call.input, { toolCallId: call.toolCallId, context: options.context, experimental_context: options.context });
    if (res.decision !== "ask" || !res.approval) {
      // rein already answered without a person: the tool's execute reports it.
      responses.push({ type: "tool-approval-response", approvalId: part.approvalId, approved: allows(res.decision), reason: res.reason });
      continue;
    }
    const a = await client.settled(res.approval.id, options);
    if (a.status === "pending") {
      throw new DeniedError({ decision: "ask", reason: `approval ${a.id} is still pending`, approvalId: a.id, checkId: a.check_id });
    }
    responses.push(a.status === "approved"
      ? { type: "tool-approval-response", approvalId: part.approvalId, approved: true, reason: `approved in rein (${a.id})` }
      : { type: "tool-approval-response", approvalId: part.approvalId, approved: false,
          reason: a.status === "rejected" ? rejectionOf(a) : `rein approval ${a.id} was ${a.status}` });
  }
  return responses;
}

function* flatten(parts) {
  for (const p of parts ?? []) {
    if (Array.isArray(p?.content)) yield* p.content; // a message
    else yield p;
  }
}
