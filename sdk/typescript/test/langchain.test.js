// LangChain agents: rein as a createAgent middleware (wrapToolCall), with
// plain tools, LangChain's own fake chat model and LangGraph's
// checkpointer, against rein. Each call rein asks about pauses on an
// interrupt of its own (per call), answered by interrupt id.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createAgent } from "langchain";
import { fakeModel } from "@langchain/core/testing";
import { tool } from "@langchain/core/tools";
import { AIMessage, ToolMessage } from "@langchain/core/messages";
import { Command, MemorySaver } from "@langchain/langgraph";
import { z } from "zod";
import { ReinClient } from "../src/index.js";
import { reinMiddleware, reinResume } from "../src/langchain.js";
import { agent as rein, approver, newSession, pendingApproval, vote } from "./helpers.js";

function world() {
  const ran = { get_weather: [], delete_file: [], send_payment: [], write_note: [], local_clock: [] };
  const tools = [
    tool(async (a) => (ran.get_weather.push(a), `sunny in ${a.city}`), {
      name: "get_weather", description: "Weather of a city", schema: z.object({ city: z.string() }) }),
    tool(async (a) => (ran.delete_file.push(a), `deleted ${a.path}`), {
      name: "delete_file", description: "Delete a file", schema: z.object({ path: z.string() }) }),
    tool(async (a) => (ran.send_payment.push(a), `paid ${a.amount} to ${a.to}`), {
      name: "send_payment", description: "Send money", schema: z.object({ to: z.string(), amount: z.number() }) }),
    tool(async (a) => (ran.write_note.push(a), `noted ${JSON.stringify(a)}`), {
      name: "write_note", description: "Write a note", schema: z.object({ text: z.string(), secret: z.string().optional() }) }),
    tool(async (a) => (ran.local_clock.push(a), "noon"), {
      name: "local_clock", description: "The time", schema: z.object({}) }),
  ];
  return { ran, tools };
}

// The model makes the given tool calls, then answers with what came back.
function scripted(calls) {
  return fakeModel()
    .respondWithTools(calls)
    .respond((messages) => new AIMessage("model saw: " + messages.filter(ToolMessage.isInstance).map((m) => m.content).join(" | ")));
}

function setup(name, args, options = {}, client = rein) {
  const { ran, tools } = world();
  const session = newSession("lc");
  const graph = createAgent({ model: scripted([{ name, args, id: `call-${session}` }]), tools,
    middleware: [reinMiddleware(client, options)], checkpointer: new MemorySaver() });
  const config = { configurable: { thread_id: session } };
  return { ran, graph, config, session, input: { messages: [{ role: "user", content: "go" }] } };
}

const lastText = (result) => String(result.messages.at(-1).content);
const toolMessages = (result) => result.messages.filter(ToolMessage.isInstance);

test("middleware: an allowed call runs and the model sees its output", async () => {
  const s = setup("get_weather", { city: "Paris" });
  const result = await s.graph.invoke(s.input, s.config);
  assert.deepEqual(s.ran.get_weather, [{ city: "Paris" }]);
  assert.equal(lastText(result), "model saw: sunny in Paris");
});

test("middleware: a denied call never runs and the model reads rein's reason", async () => {
  const s = setup("delete_file", { path: "/etc/passwd" });
  const result = await s.graph.invoke(s.input, s.config);
  assert.equal(result.__interrupt__, undefined);
  assert.deepEqual(s.ran.delete_file, []);
  assert.equal(lastText(result), "model saw: rein denied delete_file: deleting files is not allowed");
  assert.equal(toolMessages(result)[0].status, "error");
});

test("middleware: a modified call runs with rein's arguments", async () => {
  const s = setup("write_note", { text: "hi", secret: "hunter2" });
  await s.graph.invoke(s.input, s.config);
  assert.deepEqual(s.ran.write_note, [{ text: "hi" }]);
});

test("middleware: tools left out of options.tools are not checked", async () => {
  const s = setup("local_clock", {}, { tools: ["send_payment"] });
  const result = await s.graph.invoke(s.input, s.config);
  assert.deepEqual(s.ran.local_clock, [{}]);
  assert.equal(lastText(result), "model saw: noon");
  const checks = await approver.request("GET", `/v1/sessions/${encodeURIComponent(s.session)}/checks`);
  assert.equal((Array.isArray(checks) ? checks : checks.checks).length, 0);
});

test("middleware: a tool rein does not know is denied by the policy's default", async () => {
  const s = setup("local_clock", {});
  const result = await s.graph.invoke(s.input, s.config);
  assert.deepEqual(s.ran.local_clock, []);
  assert.match(lastText(result), /^model saw: rein denied local_clock/);
});

test("middleware: rein unreachable, the call never runs", async () => {
  const s = setup("get_weather", { city: "Oslo" }, {}, new ReinClient({ server: "http://127.0.0.1:9", key: "rein_x" }));
  const result = await s.graph.invoke(s.input, s.config);
  assert.deepEqual(s.ran.get_weather, []);
  assert.match(lastText(result), /^model saw: rein could not check get_weather, so it did not run: /);
});

async function pause(s, args) {
  const paused = await s.graph.invoke(s.input, s.config);
  assert.deepEqual(s.ran.send_payment, [], "nothing runs before a person decides");
  assert.equal(paused.__interrupt__?.length, 1, "one interrupt for the call");
  const v = paused.__interrupt__[0].value;
  assert.equal(v.type, "tool_approval");
  assert.deepEqual(v.toolCall, { id: `call-${s.session}`, name: "send_payment", args });
  assert.deepEqual(v.allowedDecisions, ["approve", "edit", "reject", "respond"]);
  assert.deepEqual(v.actionRequests.map((r) => [r.name, r.args]), [["send_payment", args]]);
  const pending = await pendingApproval(s.session);
  assert.equal(v.rein.approvalId, pending.id);
  return paused;
}

test("middleware: an asked call pauses; approved in rein, the agent resumes and runs it", async () => {
  const args = { to: "acct-7", amount: 500 };
  const s = setup("send_payment", args);
  const paused = await pause(s, args);
  await vote(s.session, "approve");
  const resume = await reinResume(rein, paused.__interrupt__, { timeoutMs: 10000 });
  const done = await s.graph.invoke(new Command({ resume }), s.config);
  assert.deepEqual(s.ran.send_payment, [args]);
  assert.equal(lastText(done), "model saw: paid 500 to acct-7");
  assert.equal((await approver.approval(paused.__interrupt__[0].value.rein.approvalId)).status, "consumed");
});

test("middleware: a per-call typed answer (one decision, by interrupt id) resumes too", async () => {
  const args = { to: "acct-8", amount: 80 };
  const s = setup("send_payment", args);
  const paused = await pause(s, args);
  await vote(s.session, "approve");
  const done = await s.graph.invoke(new Command({ resume: { [paused.__interrupt__[0].id]: { type: "approve" } } }), s.config);
  assert.deepEqual(s.ran.send_payment, [args]);
  assert.equal(lastText(done), "model saw: paid 80 to acct-8");
});

test("middleware: an approver's edit is what runs", async () => {
  const args = { to: "acct-7", amount: 500 };
  const s = setup("send_payment", args);
  const paused = await pause(s, args);
  await vote(s.session, "edit", { args: { to: "acct-7", amount: 50 } });
  const resume = await reinResume(rein, paused.__interrupt__, { timeoutMs: 10000 });
  const done = await s.graph.invoke(new Command({ resume }), s.config);
  assert.deepEqual(s.ran.send_payment, [{ to: "acct-7", amount: 50 }]);
  assert.equal(lastText(done), "model saw: paid 50 to acct-7");
});

test("middleware: a rejection reaches the model and nothing runs", async () => {
  const args = { to: "acct-9", amount: 900 };
  const s = setup("send_payment", args);
  const paused = await pause(s, args);
  await vote(s.session, "reject", { message: "wrong account" });
  const resume = await reinResume(rein, paused.__interrupt__, { timeoutMs: 10000 });
  const done = await s.graph.invoke(new Command({ resume }), s.config);
  assert.deepEqual(s.ran.send_payment, []);
  assert.equal(lastText(done), "model saw: rejected by alice: wrong account");
});

test("middleware: approve while rein has not approved runs nothing", async () => {
  const args = { to: "acct-1", amount: 10 };
  const s = setup("send_payment", args);
  const paused = await pause(s, args);
  const done = await s.graph.invoke(new Command({ resume: { [paused.__interrupt__[0].id]: { type: "approve" } } }), s.config);
  assert.deepEqual(s.ran.send_payment, []);
  assert.match(lastText(done), /^model saw: rein has not approved send_payment yet: still pending/);
});

test("middleware: an edit rein did not approve runs nothing", async () => {
  const args = { to: "acct-2", amount: 20 };
  const s = setup("send_payment", args);
  const paused = await pause(s, args);
  await vote(s.session, "approve");
  const forged = { [paused.__interrupt__[0].id]: { type: "edit", editedAction: { name: "send_payment", args: { to: "attacker", amount: 20 } } } };
  const done = await s.graph.invoke(new Command({ resume: forged }), s.config);
  assert.deepEqual(s.ran.send_payment, []);
  assert.match(lastText(done), /edited arguments differ from those approved in rein/);
});

test("middleware: respond answers for the tool, which never runs, and withdraws rein's approval", async () => {
  const args = { to: "acct-3", amount: 30 };
  const s = setup("send_payment", args);
  const paused = await pause(s, args);
  const id = paused.__interrupt__[0].value.rein.approvalId;
  const done = await s.graph.invoke(new Command({ resume: { [paused.__interrupt__[0].id]: { type: "respond", message: "paid by hand" } } }), s.config);
  assert.deepEqual(s.ran.send_payment, []);
  assert.equal(lastText(done), "model saw: paid by hand");
  assert.equal(toolMessages(done)[0].status, "success");
  assert.equal((await approver.approval(id)).status, "cancelled");
});

test("middleware: an answer that is no decision runs nothing", async () => {
  const args = { to: "acct-4", amount: 40 };
  const s = setup("send_payment", args);
  const paused = await pause(s, args);
  await vote(s.session, "approve");
  const done = await s.graph.invoke(new Command({ resume: { [paused.__interrupt__[0].id]: "yes please" } }), s.config);
  assert.deepEqual(s.ran.send_payment, []);
  assert.match(lastText(done), /resume send_payment with a HITL decision/);
});

test("middleware: parallel calls pause on one interrupt each and resume with their own outcomes", async () => {
  const { ran, tools } = world();
  const session = newSession("lc");
  const graph = createAgent({ model: scripted([
    { name: "send_payment", args: { to: "acct-1", amount: 1 }, id: `a-${session}` },
    { name: "send_payment", args: { to: "acct-2", amount: 2 }, id: `b-${session}` },
    { name: "get_weather", args: { city: "Oslo" }, id: `c-${session}` },
  ]), tools, middleware: [reinMiddleware(rein)], checkpointer: new MemorySaver() });
  const config = { configurable: { thread_id: session } };
  const paused = await graph.invoke({ messages: [{ role: "user", content: "go" }] }, config);
  assert.equal(paused.__interrupt__?.length, 2);
  assert.deepEqual(paused.__interrupt__.map((i) => i.value.toolCall.id).sort(), [`a-${session}`, `b-${session}`]);
  for (const a of await approver.approvals({ status: "pending", session })) {
    await approver.vote(a.id, a.args.to === "acct-1" ? { vote: "approve" } : { vote: "reject", message: "no" });
  }
  const resume = await reinResume(rein, paused.__interrupt__, { timeoutMs: 10000 });
  const done = await graph.invoke(new Command({ resume }), config);
  assert.deepEqual(ran.send_payment, [{ to: "acct-1", amount: 1 }]);
  assert.deepEqual(ran.get_weather, [{ city: "Oslo" }], "nothing runs twice on resume");
  assert.equal(lastText(done), "model saw: paid 1 to acct-1 | rejected by alice: no | sunny in Oslo");
});
