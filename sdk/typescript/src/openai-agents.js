// rein for OpenAI Agents JS: function tools whose needsApproval asks rein,
// and rein's approval outcomes applied to a paused run with state.approve /
// state.reject. An approval asked after a handoff, or inside an agent run
// as a tool (agent.asTool), surfaces in the outer run's interruptions with
// the agent that asked; applyReinDecisions finds the rein tool in that
// agent, and the resumed run executes it there with rein's arguments.
import { tool } from "@openai/agents";
import { DeniedError, runArgs } from "./index.js";
import { allows, canonical, checkOnce, refusal, rejectionOf, requestId, sessionOf, UsedChecks } from "./adapter.js";

// Each rein tool's settings and the approvals its calls are waiting on.
const registry = new WeakMap();

/**
 * Like tool() of @openai/agents, but every call is checked by rein:
 * needsApproval is true exactly when rein asks; execute runs only when
 * rein allows, with rein's arguments (the policy's modification or an
 * approver's edit); a deny or throttle returns the reason to the model.
 */
export function reinTool(client, definition, options = {}) {
  const reinName = options.toolName ?? definition.name;
  // (callId, arguments) -> approval id: a call id alone may come from two
  // nested agents' models alike.
  const waiting = new Map();
  const used = new UsedChecks();
  const check = async (runContext, input, callId) => {
    const session = sessionOf(options.session, runContext);
    return checkOnce(client, used, {
      tool: reinName,
      args: input ?? {},
      session,
      agent: options.agent,
      intent: options.intent,
      labels: options.labels,
      request_id: await requestId("openai-agents", session, callId, input ?? {}),
    });
  };
  const refuse = (decision, reason, retry) => (options.refusal ?? refusal)(reinName, decision, reason, retry);
  const t = tool({
    ...definition,
    needsApproval: async (runContext, input, callId) => {
      const res = await check(runContext, input, callId);
      if (res.decision === "ask" && res.approval) {
        waiting.set(waitKey(callId, input), res.approval.id);
        return true;
      }
      return false;
    },
    execute: async (input, runContext, details) => {
      // With the call's id this is rein's stored answer, not a second decision.
      const res = await check(runContext, input, details?.toolCall?.callId);
      if (allows(res.decision)) {
        used.add(res.id);
        return definition.execute(runArgs(res), runContext, details);
      }
      if (res.decision !== "ask" || !res.approval) return refuse(res.decision, res.reason, res.retry_after_ms);
      // Approved in the run: the grant from rein decides whether it runs.
      const w = await client.wait(res.approval.id, { timeoutMs: options.resumeWaitMs ?? 0 });
      if (w.decision === "allow") return definition.execute(runArgs(w, res), runContext, details);
      return refuse(w.decision, w.reason);
    },
  });
  registry.set(t, { reinName, options, waiting, check });
  return t;
}

/**
 * Waits until rein resolves the approvals behind a run's interruptions and
 * applies each outcome to result.state: approved -> state.approve(item),
 * rejected, expired or cancelled -> state.reject(item, { message }) with
 * the approver's message. Then continue with run(agent, result.state).
 * Interruptions of tools that are not rein tools are left for you.
 * Throws DeniedError (pending) if timeoutMs passes first.
 */
export async function applyReinDecisions(client, result, options = {}) {
  const state = result.state;
  const applied = [];
  for (const item of result.interruptions ?? []) {
    // item.agent is the agent whose tool asked: the one handed off to, or
    // the nested agent of an agent-as-tool call.
    const name = item.toolName ?? item.name;
    const t = item.agent?.tools?.find((x) => x.name === name);
    const reg = t && registry.get(t);
    if (!reg) continue;
    const callId = item.rawItem?.callId;
    const input = JSON.parse(item.arguments ?? "{}");
    const key = waitKey(callId, input);
    let id = reg.waiting.get(key);
    if (!id) { // a run restored in another process: ask rein for its stored answer
      const res = await reg.check(state._context, input, callId);
      id = res.approval?.id;
      if (!id) throw new Error(`rein: no approval for call ${callId} of ${name} (decision ${res.decision})`);
    }
    const a = await client.settled(id, options);
    if (a.status === "pending") {
      throw new DeniedError({ decision: "ask", reason: `approval ${id} is still pending`, approvalId: id, checkId: a.check_id });
    }
    if (a.status === "approved") {
      state.approve(item);
      applied.push({ item, approval: a, approved: true });
    } else {
      const message = a.status === "rejected" ? rejectionOf(a) : `rein approval ${id} was ${a.status}; the call did not run`;
      state.reject(item, { message });
      applied.push({ item, approval: a, approved: false, message });
    }
    reg.waiting.delete(key);
  }
  return applied;
}

const waitKey = (callId, input) => `${callId}\n${canonical(input ?? {})}`;
