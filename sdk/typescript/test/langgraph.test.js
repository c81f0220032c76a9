// LangGraph.js / LangChain.js: a real createAgent loop (LangChain's agent
// graph on LangGraph) with LangChain's own fake chat model, against rein.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createAgent } from "langchain";
import { fakeModel } from "@langchain/core/testing";
import { tool } from "@langchain/core/tools";
import { AIMessage, ToolMessage } from "@langchain/core/messages";
import { Command, MemorySaver } from "@langchain/langgraph";
import { z } from "zod";
import { reinTools, reinResume } from "../src/langgraph.js";
import { agent as rein, approver, newSession, pendingApproval, vote } from "./helpers.js";

// The tools count their runs: a refused call must leave its counter alone.
function world() {
  const ran = { get_weather: [], delete_file: [], send_payment: [], write_note: [] };
  const tools = [
    tool(async (a) => (ran.get_weather.push(a), `sunny in ${a.city}`), {
      name: "get_weather", description: "Weather of a city", schema: z.object({ city: z.string() }) }),
    tool(async (a) => (ran.delete_file.push(a), `deleted ${a.path}`), {
      name: "delete_file", description: "Delete a file", schema: z.object({ path: z.string() }) }),
    tool(async (a) => (ran.send_payment.push(a), `paid ${a.amount} to ${a.to}`), {
      name: "send_payment", description: "Send money", schema: z.object({ to: z.string(), amount: z.number() }) }),
    tool(async (a) => (ran.write_note.push(a), `noted ${JSON.stringify(a)}`), {
      name: "write_note", description: "Write a note", schema: z.object({ text: z.string(), secret: z.string().optional() }) }),
  ];
  return { ran, tools };
}

// The model calls one tool, then answers with what the tool said.
function scriptedModel(name, args, id) {
  return fakeModel()
    .respondWithTools([{ name, args, id }])
    .respond((messages) => {
      const last = messages.at(-1);
      assert.ok(ToolMessage.isInstance(last), "the model's second turn starts with the tool's answer");
      return new AIMessage(`model saw: ${last.content}`);
    });
}

function setup(name, args) {
  const { ran, tools } = world();
  const session = newSession("lg");
  const model = scriptedModel(name, args, `call-${session}`);
  const graph = createAgent({ model, tools: reinTools(rein, tools), checkpointer: new MemorySaver() });
  const config = { configurable: { thread_id: session } };
  const input = { messages: [{ role: "user", content: "go" }] };
  return { ran, model, graph, config, input, session };
}

const lastText = (result) => String(result.messages.at(-1).content);

test("an allowed tool runs and the model sees its output", async () => {
  const { ran, graph, config, input } = setup("get_weather", { city: "Paris" });
  const result = await graph.invoke(input, config);
  assert.deepEqual(ran.get_weather, [{ city: "Paris" }]);
  assert.equal(lastText(result), "model saw: sunny in Paris");
});

test("a denied tool never runs and the model sees rein's reason", async () => {
  const { ran, graph, config, input, model } = setup("delete_file", { path: "/etc/passwd" });
  const result = await graph.invoke(input, config);
  assert.equal(result.__interrupt__, undefined);
  assert.deepEqual(ran.delete_file, []);
  assert.equal(lastText(result), "model saw: rein denied delete_file: deleting files is not allowed");
  assert.equal(model.callCount, 2);
});

test("a modified call runs with rein's arguments", async () => {
  const { ran, graph, config, input } = setup("write_note", { text: "hi", secret: "hunter2" });
  await graph.invoke(input, config);
  assert.deepEqual(ran.write_note, [{ text: "hi" }]);
});

// Pauses at the interrupt and checks it is a LangChain HITL request.
async function pause(s, args) {
  const paused = await s.graph.invoke(s.input, s.config);
  assert.deepEqual(s.ran.send_payment, [], "nothing runs before a person decides");
  assert.equal(paused.__interrupt__?.length, 1, "the graph pauses with one interrupt");
  const v = paused.__interrupt__[0].value;
  assert.deepEqual(v.actionRequests.map((r) => [r.name, r.args]), [["send_payment", args]]);
  assert.match(v.actionRequests[0].description, /payments need an approval/);
  assert.deepEqual(v.reviewConfigs, [{ actionName: "send_payment", allowedDecisions: ["approve", "edit", "reject", "respond"] }]);
  assert.equal(v.type, "tool_approval");
  assert.deepEqual([v.toolCall.name, v.toolCall.args], ["send_payment", args]);
  const pending = await pendingApproval(s.session);
  assert.equal(v.rein.approvalId, pending.id);
  return paused;
}

test("an asked tool pauses; approved in rein, the graph resumes and runs it", async () => {
  const args = { to: "acct-7", amount: 500 };
  const s = setup("send_payment", args);
  const paused = await pause(s, args);
  await vote(s.session, "approve");
  const resume = await reinResume(rein, paused.__interrupt__, { timeoutMs: 10000 });
  assert.deepEqual(Object.values(resume), [{ decisions: [{ type: "approve" }] }]);
  const done = await s.graph.invoke(new Command({ resume }), s.config);
  assert.deepEqual(s.ran.send_payment, [args]);
  assert.equal(lastText(done), "model saw: paid 500 to acct-7");
  const a = await approver.approval(paused.__interrupt__[0].value.rein.approvalId);
  assert.equal(a.status, "consumed", "the run used the grant");
});

test("an approver's edit reaches the tool", async () => {
  const args = { to: "acct-7", amount: 500 };
  const s = setup("send_payment", args);
  const paused = await pause(s, args);
  await vote(s.session, "edit", { args: { to: "acct-7", amount: 50 }, message: "50 is enough" });
  const resume = await reinResume(rein, paused.__interrupt__, { timeoutMs: 10000 });
  assert.deepEqual(Object.values(resume), [{ decisions: [{ type: "edit", editedAction: { name: "send_payment", args: { to: "acct-7", amount: 50 } } }] }]);
  const done = await s.graph.invoke(new Command({ resume }), s.config);
  assert.deepEqual(s.ran.send_payment, [{ to: "acct-7", amount: 50 }]);
  assert.equal(lastText(done), "model saw: paid 50 to acct-7");
});

test("a rejection reaches the model and the tool never runs", async () => {
  const args = { to: "acct-9", amount: 900 };
  const s = setup("send_payment", args);
  const paused = await pause(s, args);
  await vote(s.session, "reject", { message: "wrong account" });
  const resume = await reinResume(rein, paused.__interrupt__, { timeoutMs: 10000 });
  const done = await s.graph.invoke(new Command({ resume }), s.config);
  assert.deepEqual(s.ran.send_payment, []);
  assert.equal(lastText(done), "model saw: rejected by alice: wrong account");
});

test("resuming with approve while rein has not approved does not run the tool", async () => {
  const args = { to: "acct-1", amount: 10 };
  const s = setup("send_payment", args);
  const paused = await pause(s, args);
  const forged = { [paused.__interrupt__[0].id]: { decisions: [{ type: "approve" }] } };
  const done = await s.graph.invoke(new Command({ resume: forged }), s.config);
  assert.deepEqual(s.ran.send_payment, []);
  assert.match(lastText(done), /^model saw: rein has not approved send_payment yet: still pending/);
  assert.equal((await pendingApproval(s.session)).status, "pending");
});

test("resuming with an edit rein did not approve does not run the tool", async () => {
  const args = { to: "acct-2", amount: 20 };
  const s = setup("send_payment", args);
  const paused = await pause(s, args);
  await vote(s.session, "approve");
  const forged = { [paused.__interrupt__[0].id]: { decisions: [{ type: "edit", editedAction: { name: "send_payment", args: { to: "attacker", amount: 20 } } }] } };
  const done = await s.graph.invoke(new Command({ resume: forged }), s.config);
  assert.deepEqual(s.ran.send_payment, []);
  assert.match(lastText(done), /edited arguments differ from those approved in rein/);
});

test("rejecting in the app cancels the pending approval in rein", async () => {
  const args = { to: "acct-3", amount: 30 };
  const s = setup("send_payment", args);
  const paused = await pause(s, args);
  const id = paused.__interrupt__[0].value.rein.approvalId;
  const resume = { [paused.__interrupt__[0].id]: { decisions: [{ type: "reject", message: "not today" }] } };
  const done = await s.graph.invoke(new Command({ resume }), s.config);
  assert.deepEqual(s.ran.send_payment, []);
  assert.equal(lastText(done), "model saw: not today");
  assert.equal((await approver.approval(id)).status, "cancelled");
});

test("parallel calls: each ask pauses on its own interrupt and resumes with its own outcome", async () => {
  const { ran, tools } = world();
  const session = newSession("lg");
  const model = fakeModel()
    .respondWithTools([
      { name: "send_payment", args: { to: "acct-1", amount: 1 }, id: `a-${session}` },
      { name: "send_payment", args: { to: "acct-2", amount: 2 }, id: `b-${session}` },
      { name: "get_weather", args: { city: "Oslo" }, id: `c-${session}` },
    ])
    .respond((messages) => new AIMessage(messages.filter(ToolMessage.isInstance).map((m) => m.content).join(" | ")));
  const graph = createAgent({ model, tools: reinTools(rein, tools), checkpointer: new MemorySaver() });
  const config = { configurable: { thread_id: session } };
  const paused = await graph.invoke({ messages: [{ role: "user", content: "go" }] }, config);
  assert.equal(paused.__interrupt__?.length, 2);
  assert.deepEqual(ran.get_weather, [{ city: "Oslo" }], "the allowed call ran meanwhile");
  for (const a of await approver.approvals({ status: "pending", session })) {
    await approver.vote(a.id, a.args.to === "acct-1" ? { vote: "approve" } : { vote: "reject", message: "no" });
  }
  const resume = await reinResume(rein, paused.__interrupt__, { timeoutMs: 10000 });
  const done = await graph.invoke(new Command({ resume }), config);
  assert.deepEqual(ran.send_payment, [{ to: "acct-1", amount: 1 }]);
  assert.deepEqual(ran.get_weather, [{ city: "Oslo" }], "nothing runs twice on resume");
  assert.equal(lastText(done), "paid 1 to acct-1 | rejected by alice: no | sunny in Oslo");
});

test("a tool call id seen again gets a new decision, not the stored allow", async () => {
  const { ran, tools } = world();
  const session = newSession("lg");
  const id = `same-${session}`;
  const model = fakeModel()
    .respondWithTools([{ name: "get_weather", args: { city: "Rome" }, id }])
    .respondWithTools([{ name: "get_weather", args: { city: "Rome" }, id }])
    .respond(new AIMessage("done"));
  const graph = createAgent({ model, tools: reinTools(rein, tools), checkpointer: new MemorySaver() });
  const config = { configurable: { thread_id: session } };
  await graph.invoke({ messages: [{ role: "user", content: "go" }] }, config);
  assert.equal(ran.get_weather.length, 2);
  const checks = await approver.request("GET", `/v1/sessions/${encodeURIComponent(session)}/checks`);
  const list = Array.isArray(checks) ? checks : checks.checks;
  assert.equal(list.length, 2, "two decisions recorded, one per run");
});
