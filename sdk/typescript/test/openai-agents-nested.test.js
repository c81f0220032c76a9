// OpenAI Agents JS: rein's approvals asked after a handoff and inside a
// nested agent run as a tool (agent.asTool), with real Agent run loops and
// scripted models (the SDK's Model interface), against rein. What runs is
// exactly what rein allowed, once, in the agent that asked.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Agent, run, RunState, setTracingDisabled, Usage } from "@openai/agents";
import { z } from "zod";
import { reinTool, applyReinDecisions } from "../src/openai-agents.js";
import { agent as rein, approver, newSession, pendingApproval, vote } from "./helpers.js";

setTracingDisabled(true);

// A Model answering from a list of turns; each turn gets the request and
// returns output items.
class Script {
  constructor(name, turns) {
    this.name = name;
    this.turns = turns;
    this.requests = [];
  }
  async getResponse(req) {
    this.requests.push(req);
    const turn = this.turns.shift();
    if (!turn) throw new Error(`${this.name}: the script has no more turns`);
    return { usage: new Usage(), output: turn(req), responseId: `${this.name}-${this.requests.length}` };
  }
  async *getStreamedResponse() {
    throw new Error("not scripted");
  }
}

const call = (name, args, callId) => () => [{ type: "function_call", id: `fc-${callId}`, callId, name, arguments: JSON.stringify(args), status: "completed" }];
const lastOutput = (req) => {
  const out = [...req.input].reverse().find((i) => i.type === "function_call_result");
  assert.ok(out, "the turn after a tool call carries its result");
  return typeof out.output === "string" ? out.output : out.output.text;
};
const say = (id, f) => (req) => [{ type: "message", id: `msg-${id}`, role: "assistant", status: "completed",
  content: [{ type: "output_text", text: f(req) }] }];

function payTool(ran, session) {
  return reinTool(rein, { name: "send_payment", description: "Send money", parameters: z.object({ to: z.string(), amount: z.number() }),
    execute: async (a) => (ran.push(a), `paid ${a.amount} to ${a.to}`) }, { session });
}

// triage hands off to payments, whose send_payment rein asks about.
function handoffSetup(args) {
  const session = newSession("oa-handoff");
  const ran = [];
  const payments = new Agent({ name: "payments", instructions: "Pay.", tools: [payTool(ran, session)],
    model: new Script("payments", [call("send_payment", args, `pay-${session}`), say("p", (r) => `payments saw: ${lastOutput(r)}`)]) });
  const triage = new Agent({ name: "triage", instructions: "Route.", handoffs: [payments],
    model: new Script("triage", [call("transfer_to_payments", {}, `h-${session}`)]) });
  return { session, ran, triage, payments };
}

// boss calls the payments agent as a tool; send_payment runs inside it.
function nestedSetup(args) {
  const session = newSession("oa-nested");
  const ran = [];
  const payments = new Agent({ name: "payments", instructions: "Pay.", tools: [payTool(ran, session)],
    model: new Script("payments", [call("send_payment", args, `pay-${session}`), say("p", (r) => `payments saw: ${lastOutput(r)}`)]) });
  const boss = new Agent({ name: "boss", instructions: "Delegate.",
    tools: [payments.asTool({ toolName: "payments_agent", toolDescription: "Pays people" })],
    model: new Script("boss", [call("payments_agent", { input: "pay acct-7" }, `n-${session}`), say("b", (r) => `boss saw: ${lastOutput(r)}`)]) });
  return { session, ran, boss, payments };
}

async function paused(result, session, args) {
  assert.equal(result.interruptions?.length, 1, "the run stops with one approval request");
  const item = result.interruptions[0];
  assert.equal(item.name, "send_payment");
  assert.equal(item.agent.name, "payments", "the approval is asked in the agent that calls the tool");
  assert.deepEqual(JSON.parse(item.arguments), args);
  return pendingApproval(session);
}

test("after a handoff: approved in rein, the run resumes in the agent handed to", async () => {
  const args = { to: "acct-7", amount: 500 };
  const s = handoffSetup(args);
  const first = await run(s.triage, "pay acct-7");
  await paused(first, s.session, args);
  assert.deepEqual(s.ran, []);
  await vote(s.session, "approve");
  const applied = await applyReinDecisions(rein, first, { timeoutMs: 10000 });
  assert.deepEqual(applied.map((d) => d.approved), [true]);
  const done = await run(s.triage, first.state);
  assert.deepEqual(s.ran, [args]);
  assert.equal(done.lastAgent?.name, "payments");
  assert.equal(done.finalOutput, "payments saw: paid 500 to acct-7");
  assert.equal((await approver.approval(applied[0].approval.id)).status, "consumed");
});

test("after a handoff: an approver's edit is what runs", async () => {
  const args = { to: "acct-7", amount: 500 };
  const s = handoffSetup(args);
  const first = await run(s.triage, "pay acct-7");
  await paused(first, s.session, args);
  await vote(s.session, "edit", { args: { to: "acct-7", amount: 50 } });
  await applyReinDecisions(rein, first, { timeoutMs: 10000 });
  const done = await run(s.triage, first.state);
  assert.deepEqual(s.ran, [{ to: "acct-7", amount: 50 }]);
  assert.equal(done.finalOutput, "payments saw: paid 50 to acct-7");
});

test("after a handoff: a rejection reaches the model and nothing runs", async () => {
  const args = { to: "acct-9", amount: 900 };
  const s = handoffSetup(args);
  const first = await run(s.triage, "pay acct-9");
  await paused(first, s.session, args);
  await vote(s.session, "reject", { message: "wrong account" });
  await applyReinDecisions(rein, first, { timeoutMs: 10000 });
  const done = await run(s.triage, first.state);
  assert.deepEqual(s.ran, []);
  assert.equal(done.finalOutput, "payments saw: rejected by alice: wrong account");
});

test("after a handoff: a run restored from its serialized state finds rein's approval", async () => {
  const args = { to: "acct-4", amount: 40 };
  const s = handoffSetup(args);
  const first = await run(s.triage, "pay acct-4");
  await paused(first, s.session, args);
  const saved = first.state.toString();
  await vote(s.session, "approve");
  // Another process: fresh agents and tools with no memory of the call.
  const ran = [];
  const payments = new Agent({ name: "payments", instructions: "Pay.", tools: [payTool(ran, s.session)],
    model: new Script("payments", [say("p", (r) => `payments saw: ${lastOutput(r)}`)]) });
  const triage = new Agent({ name: "triage", instructions: "Route.", handoffs: [payments], model: new Script("triage", []) });
  const state = await RunState.fromString(triage, saved);
  await applyReinDecisions(rein, { state, interruptions: state.getInterruptions() }, { timeoutMs: 10000 });
  const done = await run(triage, state);
  assert.deepEqual(ran, [args]);
  assert.deepEqual(s.ran, []);
  assert.equal(done.finalOutput, "payments saw: paid 40 to acct-4");
});

test("nested agent as a tool: approved in rein, the inner run resumes and the outer model sees its answer", async () => {
  const args = { to: "acct-7", amount: 500 };
  const s = nestedSetup(args);
  const first = await run(s.boss, "pay acct-7");
  await paused(first, s.session, args);
  assert.deepEqual(s.ran, []);
  await vote(s.session, "approve");
  const applied = await applyReinDecisions(rein, first, { timeoutMs: 10000 });
  assert.deepEqual(applied.map((d) => d.approved), [true]);
  const done = await run(s.boss, first.state);
  assert.deepEqual(done.interruptions ?? [], []);
  assert.deepEqual(s.ran, [args], "the payment runs once, inside the nested agent");
  assert.equal(done.finalOutput, "boss saw: payments saw: paid 500 to acct-7");
});

test("nested agent as a tool: an approver's edit is what runs", async () => {
  const args = { to: "acct-7", amount: 500 };
  const s = nestedSetup(args);
  const first = await run(s.boss, "pay acct-7");
  await paused(first, s.session, args);
  await vote(s.session, "edit", { args: { to: "acct-7", amount: 5 } });
  await applyReinDecisions(rein, first, { timeoutMs: 10000 });
  const done = await run(s.boss, first.state);
  assert.deepEqual(s.ran, [{ to: "acct-7", amount: 5 }]);
  assert.equal(done.finalOutput, "boss saw: payments saw: paid 5 to acct-7");
});

test("nested agent as a tool: a rejection reaches the inner model and nothing runs", async () => {
  const args = { to: "acct-9", amount: 900 };
  const s = nestedSetup(args);
  const first = await run(s.boss, "pay acct-9");
  await paused(first, s.session, args);
  await vote(s.session, "reject", { message: "not this one" });
  await applyReinDecisions(rein, first, { timeoutMs: 10000 });
  const done = await run(s.boss, first.state);
  assert.deepEqual(s.ran, []);
  assert.equal(done.finalOutput, "boss saw: payments saw: rejected by alice: not this one");
});

test("nested agent as a tool: approving in the run while rein has not approved runs nothing", async () => {
  const args = { to: "acct-1", amount: 10 };
  const s = nestedSetup(args);
  const first = await run(s.boss, "pay acct-1");
  await paused(first, s.session, args);
  first.state.approve(first.interruptions[0]);
  const done = await run(s.boss, first.state);
  assert.deepEqual(s.ran, []);
  assert.match(done.finalOutput, /^boss saw: payments saw: rein has not approved send_payment yet: still pending/);
});

test("nested agent as a tool: a run restored from its serialized state finds rein's approval", async () => {
  const args = { to: "acct-5", amount: 55 };
  const s = nestedSetup(args);
  const first = await run(s.boss, "pay acct-5");
  await paused(first, s.session, args);
  const saved = first.state.toString();
  await vote(s.session, "approve");
  // Another process: fresh agents and tools with no memory of the call.
  const ran = [];
  const payments = new Agent({ name: "payments", instructions: "Pay.", tools: [payTool(ran, s.session)],
    model: new Script("payments", [say("p", (r) => `payments saw: ${lastOutput(r)}`)]) });
  const boss = new Agent({ name: "boss", instructions: "Delegate.",
    tools: [payments.asTool({ toolName: "payments_agent", toolDescription: "Pays people" })],
    model: new Script("boss", [say("b", (r) => `boss saw: ${lastOutput(r)}`)]) });
  const state = await RunState.fromString(boss, saved);
  const applied = await applyReinDecisions(rein, { state, interruptions: state.getInterruptions() }, { timeoutMs: 10000 });
  assert.deepEqual(applied.map((d) => d.approved), [true]);
  const done = await run(boss, state);
  assert.deepEqual(ran, [args]);
  assert.deepEqual(s.ran, []);
  assert.equal(done.finalOutput, "boss saw: payments saw: paid 55 to acct-5");
});

test("two nested agents ask at once: each call gets its own outcome", async () => {
  const session = newSession("oa-nested");
  const ran = [];
  const mk = (name, args, id) => new Agent({ name, instructions: "Pay.", tools: [payTool(ran, session)],
    model: new Script(name, [call("send_payment", args, `${id}-${session}`), say(id, (r) => `${name} saw: ${lastOutput(r)}`)]) });
  const a = mk("payer_a", { to: "acct-a", amount: 1 }, "a");
  const b = mk("payer_b", { to: "acct-b", amount: 2 }, "b");
  const boss = new Agent({ name: "boss", instructions: "Delegate.",
    tools: [a.asTool({ toolName: "payer_a", toolDescription: "A" }), b.asTool({ toolName: "payer_b", toolDescription: "B" })],
    model: new Script("boss", [
      () => [...call("payer_a", { input: "pay a" }, `na-${session}`)(), ...call("payer_b", { input: "pay b" }, `nb-${session}`)()],
      (req) => [{ type: "message", id: "msg-boss", role: "assistant", status: "completed", content: [{ type: "output_text",
        text: req.input.filter((i) => i.type === "function_call_result").map((o) => (typeof o.output === "string" ? o.output : o.output.text)).join(" | ") }] }],
    ]) });
  const first = await run(boss, "pay both");
  assert.deepEqual(first.interruptions.map((i) => [i.agent.name, i.name]).sort(), [["payer_a", "send_payment"], ["payer_b", "send_payment"]]);
  for (const p of await approver.approvals({ status: "pending", session })) {
    await approver.vote(p.id, p.args.to === "acct-a" ? { vote: "approve" } : { vote: "reject", message: "no" });
  }
  const applied = await applyReinDecisions(rein, first, { timeoutMs: 10000 });
  assert.deepEqual(applied.map((d) => [d.item.agent.name, d.approved]).sort(), [["payer_a", true], ["payer_b", false]]);
  const done = await run(boss, first.state);
  assert.deepEqual(ran, [{ to: "acct-a", amount: 1 }]);
  assert.equal(done.finalOutput, "payer_a saw: paid 1 to acct-a | payer_b saw: rejected by alice: no");
});

test("nested agents whose models reuse a call id: each call is its own decision", async () => {
  const session = newSession("oa-nested");
  const ran = [];
  const pay = payTool(ran, session); // one rein tool shared by both agents
  const mk = (name, args) => new Agent({ name, instructions: "Pay.", tools: [pay],
    model: new Script(name, [call("send_payment", args, "call_1"), say(name, (r) => `${name} saw: ${lastOutput(r)}`)]) });
  const a = mk("payer_a", { to: "acct-a", amount: 1 });
  const b = mk("payer_b", { to: "acct-b", amount: 2 });
  const boss = new Agent({ name: "boss", instructions: "Delegate.",
    tools: [a.asTool({ toolName: "payer_a", toolDescription: "A" }), b.asTool({ toolName: "payer_b", toolDescription: "B" })],
    model: new Script("boss", [
      () => [...call("payer_a", { input: "pay a" }, `na-${session}`)(), ...call("payer_b", { input: "pay b" }, `nb-${session}`)()],
      (req) => [{ type: "message", id: "msg-boss", role: "assistant", status: "completed", content: [{ type: "output_text",
        text: req.input.filter((i) => i.type === "function_call_result").map((o) => (typeof o.output === "string" ? o.output : o.output.text)).join(" | ") }] }],
    ]) });
  const first = await run(boss, "pay both");
  assert.equal(first.interruptions.length, 2);
  const pending = await approver.approvals({ status: "pending", session });
  assert.deepEqual(pending.map((p) => p.args.to).sort(), ["acct-a", "acct-b"], "one approval per call, each with its own arguments");
  for (const p of pending) await approver.vote(p.id, p.args.to === "acct-b" ? { vote: "approve" } : { vote: "reject", message: "no" });
  await applyReinDecisions(rein, first, { timeoutMs: 10000 });
  const done = await run(boss, first.state);
  assert.deepEqual(ran, [{ to: "acct-b", amount: 2 }]);
  assert.equal(done.finalOutput, "payer_a saw: rejected by alice: no | payer_b saw: paid 2 to acct-b");
});
