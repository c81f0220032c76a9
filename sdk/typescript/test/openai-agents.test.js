// OpenAI Agents JS: a real Agent run loop with a scripted model (the SDK's
// Model interface, answering from a script), against rein.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Agent, run, RunState, setTracingDisabled, Usage } from "@openai/agents";
import { z } from "zod";
import { reinTool, applyReinDecisions } from "../src/openai-agents.js";
import { agent as rein, approver, newSession, pendingApproval, vote } from "./helpers.js";

setTracingDisabled(true);

// A Model that calls one tool, then answers with what the tool said.
class ScriptedModel {
  constructor(name, args, callId) {
    this.requests = [];
    this.steps = [
      () => [{ type: "function_call", id: `fc-${callId}`, callId, name, arguments: JSON.stringify(args), status: "completed" }],
      (req) => {
        const out = [...req.input].reverse().find((i) => i.type === "function_call_result");
        assert.ok(out, "the model's second turn carries the tool's result");
        const text = typeof out.output === "string" ? out.output : out.output.text;
        return [{ type: "message", id: `msg-${callId}`, role: "assistant", status: "completed",
          content: [{ type: "output_text", text: `model saw: ${text}` }] }];
      },
    ];
  }
  async getResponse(req) {
    this.requests.push(req);
    const step = this.steps.shift();
    if (!step) throw new Error("the script has no more turns");
    return { usage: new Usage(), output: step(req), responseId: `resp-${this.requests.length}` };
  }
  async *getStreamedResponse() {
    throw new Error("not scripted");
  }
}

function setup(name, args, session = newSession("oa")) {
  const ran = { get_weather: [], delete_file: [], send_payment: [], write_note: [] };
  const opts = { session };
  const tools = [
    reinTool(rein, { name: "get_weather", description: "Weather of a city", parameters: z.object({ city: z.string() }),
      execute: async (a) => (ran.get_weather.push(a), `sunny in ${a.city}`) }, opts),
    reinTool(rein, { name: "delete_file", description: "Delete a file", parameters: z.object({ path: z.string() }),
      execute: async (a) => (ran.delete_file.push(a), `deleted ${a.path}`) }, opts),
    reinTool(rein, { name: "send_payment", description: "Send money", parameters: z.object({ to: z.string(), amount: z.number() }),
      execute: async (a) => (ran.send_payment.push(a), `paid ${a.amount} to ${a.to}`) }, opts),
    reinTool(rein, { name: "write_note", description: "Write a note",
      parameters: z.object({ text: z.string(), secret: z.string().nullable() }),
      execute: async (a) => (ran.write_note.push(a), `noted ${JSON.stringify(a)}`) }, opts),
  ];
  const model = new ScriptedModel(name, args, `call-${session}`);
  const agent = new Agent({ name: "assistant", instructions: "Use the tools.", model, tools });
  return { ran, model, agent, session };
}

test("an allowed tool runs and the model sees its output", async () => {
  const { ran, agent } = setup("get_weather", { city: "Paris" });
  const result = await run(agent, "weather?");
  assert.deepEqual(result.interruptions ?? [], []);
  assert.deepEqual(ran.get_weather, [{ city: "Paris" }]);
  assert.equal(result.finalOutput, "model saw: sunny in Paris");
});

test("a denied tool never runs and the model sees rein's reason", async () => {
  const { ran, agent } = setup("delete_file", { path: "/etc/passwd" });
  const result = await run(agent, "clean up");
  assert.deepEqual(result.interruptions ?? [], []);
  assert.deepEqual(ran.delete_file, []);
  assert.equal(result.finalOutput, "model saw: rein denied delete_file: deleting files is not allowed");
});

test("a modified call runs with rein's arguments", async () => {
  const { ran, agent } = setup("write_note", { text: "hi", secret: "hunter2" });
  await run(agent, "note it");
  assert.deepEqual(ran.write_note, [{ text: "hi" }]);
});

// Runs until the approval interruption and checks it is rein's.
async function pause(s, args) {
  const result = await run(s.agent, "pay");
  assert.deepEqual(s.ran.send_payment, [], "nothing runs before a person decides");
  assert.equal(result.interruptions?.length, 1, "the run stops with one approval request");
  const item = result.interruptions[0];
  assert.equal(item.name, "send_payment");
  assert.deepEqual(JSON.parse(item.arguments), args);
  await pendingApproval(s.session);
  return result;
}

test("an asked tool pauses; approved in rein, the run resumes and runs it", async () => {
  const args = { to: "acct-7", amount: 500 };
  const s = setup("send_payment", args);
  const paused = await pause(s, args);
  await vote(s.session, "approve");
  const applied = await applyReinDecisions(rein, paused, { timeoutMs: 10000 });
  assert.deepEqual(applied.map((d) => d.approved), [true]);
  const done = await run(s.agent, paused.state);
  assert.deepEqual(s.ran.send_payment, [args]);
  assert.equal(done.finalOutput, "model saw: paid 500 to acct-7");
  assert.equal((await approver.approval(applied[0].approval.id)).status, "consumed");
});

test("an approver's edit reaches the tool", async () => {
  const args = { to: "acct-7", amount: 500 };
  const s = setup("send_payment", args);
  const paused = await pause(s, args);
  await vote(s.session, "edit", { args: { to: "acct-7", amount: 50 } });
  await applyReinDecisions(rein, paused, { timeoutMs: 10000 });
  const done = await run(s.agent, paused.state);
  assert.deepEqual(s.ran.send_payment, [{ to: "acct-7", amount: 50 }]);
  assert.equal(done.finalOutput, "model saw: paid 50 to acct-7");
});

test("a rejection reaches the model and the tool never runs", async () => {
  const args = { to: "acct-9", amount: 900 };
  const s = setup("send_payment", args);
  const paused = await pause(s, args);
  await vote(s.session, "reject", { message: "wrong account" });
  const applied = await applyReinDecisions(rein, paused, { timeoutMs: 10000 });
  assert.deepEqual(applied.map((d) => d.approved), [false]);
  const done = await run(s.agent, paused.state);
  assert.deepEqual(s.ran.send_payment, []);
  assert.equal(done.finalOutput, "model saw: rejected by alice: wrong account");
});

test("approving in the run while rein has not approved does not run the tool", async () => {
  const args = { to: "acct-1", amount: 10 };
  const s = setup("send_payment", args);
  const paused = await pause(s, args);
  paused.state.approve(paused.interruptions[0]);
  const done = await run(s.agent, paused.state);
  assert.deepEqual(s.ran.send_payment, []);
  assert.match(done.finalOutput, /^model saw: rein has not approved send_payment yet: still pending/);
});

test("a run restored from its serialized state finds rein's approval", async () => {
  const args = { to: "acct-4", amount: 40 };
  const s = setup("send_payment", args);
  const paused = await pause(s, args);
  const saved = paused.state.toString();
  await vote(s.session, "approve");
  // A fresh agent and tools (another process) have no memory of the call:
  // the helper finds the approval through rein's stored answer.
  const t = setup("send_payment", args, s.session);
  t.model.steps.shift(); // the restored run continues at the tool call
  const again = await RunState.fromString(t.agent, saved);
  await applyReinDecisions(rein, { state: again, interruptions: again.getInterruptions() }, { timeoutMs: 10000 });
  const done = await run(t.agent, again);
  assert.deepEqual(t.ran.send_payment, [args]);
  assert.deepEqual(s.ran.send_payment, []);
  assert.equal(done.finalOutput, "model saw: paid 40 to acct-4");
});
