// Vercel AI SDK: a real generateText tool loop with the SDK's own
// MockLanguageModelV3 (ai/test), against rein. The same cases run against
// each installed major of the SDK (ai-sdk6.test.js, ai-sdk7.test.js): with
// rein's decision as the tools' needsApproval (AI SDK 6, and 7 where it is
// deprecated but still honoured) or as AI SDK 7's toolApproval.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import { reinTools, reinApprovalResponses, reinToolApproval } from "../src/ai-sdk.js";
import { ReinClient } from "../src/index.js";
import { agent as rein, approver, newSession, pendingApproval, vote } from "./helpers.js";

/**
 * Runs the adapter's cases with ai (the "ai" module of one major) and
 * MockLanguageModelV3 from its "ai/test"; mode is "needsApproval" or
 * "toolApproval".
 */
export function aiSdkSuite(label, { ai, MockLanguageModelV3, mode }) {
const { generateText, stepCountIs, tool } = ai;
// How the model reads a call rein refused: a tool result (needsApproval)
// or AI SDK 7's execution-denied output (toolApproval).
const refused = (text) => (mode === "toolApproval" ? `denied: ${text}` : text);
const approval = (tools) => (mode === "toolApproval" ? { toolApproval: reinToolApproval(tools) } : {});

describe(label, () => {
const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } };

// What the model reads in a tool result part of its prompt.
function resultText(part) {
  const o = part.output;
  switch (o.type) {
    case "text": case "error-text": return o.value;
    case "json": case "error-json": return JSON.stringify(o.value);
    case "execution-denied": return `denied: ${o.reason}`;
    default: return JSON.stringify(o);
  }
}

// A model that calls one tool, then answers with what came back.
function scriptedModel(name, args, toolCallId) {
  let turn = 0;
  return new MockLanguageModelV3({
    doGenerate: async ({ prompt }) => {
      turn++;
      if (turn === 1) {
        return { content: [{ type: "tool-call", toolCallId, toolName: name, input: JSON.stringify(args) }],
          finishReason: { unified: "tool-calls", raw: "tool_calls" }, usage, warnings: [] };
      }
      const results = prompt.filter((m) => m.role === "tool").flatMap((m) => m.content).filter((p) => p.type === "tool-result");
      assert.ok(results.length > 0, "the model's next turn carries the tool's result");
      return { content: [{ type: "text", text: `model saw: ${resultText(results.at(-1))}` }],
        finishReason: { unified: "stop", raw: "stop" }, usage, warnings: [] };
    },
  });
}

function setup(name, args) {
  const session = newSession("ai");
  const ran = { get_weather: [], delete_file: [], send_payment: [], write_note: [] };
  const tools = reinTools(rein, {
    get_weather: tool({ description: "Weather of a city", inputSchema: z.object({ city: z.string() }),
      execute: async (a) => (ran.get_weather.push(a), `sunny in ${a.city}`) }),
    delete_file: tool({ description: "Delete a file", inputSchema: z.object({ path: z.string() }),
      execute: async (a) => (ran.delete_file.push(a), `deleted ${a.path}`) }),
    send_payment: tool({ description: "Send money", inputSchema: z.object({ to: z.string(), amount: z.number() }),
      execute: async (a) => (ran.send_payment.push(a), `paid ${a.amount} to ${a.to}`) }),
    write_note: tool({ description: "Write a note", inputSchema: z.object({ text: z.string(), secret: z.string().optional() }),
      execute: async (a) => (ran.write_note.push(a), `noted ${JSON.stringify(a)}`) }),
  }, { session });
  const model = scriptedModel(name, args, `call-${session}`);
  const messages = [{ role: "user", content: "go" }];
  const generate = () => generateText({ model, tools, messages, stopWhen: stepCountIs(5), ...approval(tools) });
  return { ran, tools, model, messages, generate, session };
}

test("an allowed tool runs and the model sees its output", async () => {
  const { ran, generate } = setup("get_weather", { city: "Paris" });
  const result = await generate();
  assert.deepEqual(ran.get_weather, [{ city: "Paris" }]);
  assert.equal(result.text, "model saw: sunny in Paris");
});

test("a denied tool never runs and the model sees rein's reason", async () => {
  const { ran, generate } = setup("delete_file", { path: "/etc/passwd" });
  const result = await generate();
  assert.deepEqual(ran.delete_file, []);
  assert.equal(result.text, "model saw: " + refused("rein denied delete_file: deleting files is not allowed"));
});

test("a modified call runs with rein's arguments", async () => {
  const { ran, generate } = setup("write_note", { text: "hi", secret: "hunter2" });
  await generate();
  assert.deepEqual(ran.write_note, [{ text: "hi" }]);
});

// Generates until the approval request and checks it is rein's.
async function pause(s, args) {
  const result = await s.generate();
  assert.deepEqual(s.ran.send_payment, [], "nothing runs before a person decides");
  const requests = result.content.filter((p) => p.type === "tool-approval-request");
  assert.equal(requests.length, 1, "the step ends with one tool-approval-request");
  assert.equal(requests[0].toolCall.toolName, "send_payment");
  assert.deepEqual(requests[0].toolCall.input, args);
  if (mode === "toolApproval") {
    assert.equal(requests[0].reason, "payments need an approval", "the request carries rein's reason");
    assert.ok(!requests[0].isAutomatic);
  }
  await pendingApproval(s.session);
  s.messages.push(...(result.responseMessages ?? result.response.messages)); // AI SDK 7 ?? 6
  return result;
}

async function resume(s, result) {
  const responses = await reinApprovalResponses(rein, s.tools, result.content, { timeoutMs: 10000 });
  s.messages.push({ role: "tool", content: responses });
  return { responses, done: await s.generate() };
}

test("an asked tool pauses; approved in rein, the loop resumes and runs it", async () => {
  const args = { to: "acct-7", amount: 500 };
  const s = setup("send_payment", args);
  const paused = await pause(s, args);
  const approval = await pendingApproval(s.session);
  await vote(s.session, "approve");
  const { responses, done } = await resume(s, paused);
  assert.equal(responses.length, 1);
  assert.equal(responses[0].type, "tool-approval-response");
  assert.equal(responses[0].approved, true);
  assert.equal(responses[0].approvalId, paused.content.find((p) => p.type === "tool-approval-request").approvalId);
  assert.deepEqual(s.ran.send_payment, [args]);
  assert.equal(done.text, "model saw: paid 500 to acct-7");
  assert.equal((await approver.approval(approval.id)).status, "consumed");
});

test("an approver's edit reaches the tool", async () => {
  const args = { to: "acct-7", amount: 500 };
  const s = setup("send_payment", args);
  const paused = await pause(s, args);
  await vote(s.session, "edit", { args: { to: "acct-7", amount: 50 } });
  const { done } = await resume(s, paused);
  assert.deepEqual(s.ran.send_payment, [{ to: "acct-7", amount: 50 }]);
  assert.equal(done.text, "model saw: paid 50 to acct-7");
});

test("a rejection reaches the model and the tool never runs", async () => {
  const args = { to: "acct-9", amount: 900 };
  const s = setup("send_payment", args);
  const paused = await pause(s, args);
  await vote(s.session, "reject", { message: "wrong account" });
  const { responses, done } = await resume(s, paused);
  assert.deepEqual(responses.map((r) => [r.approved, r.reason]), [[false, "rejected by alice: wrong account"]]);
  assert.deepEqual(s.ran.send_payment, []);
  assert.equal(done.text, "model saw: denied: rejected by alice: wrong account");
});

test("approving in the conversation while rein has not approved does not run the tool", async () => {
  const args = { to: "acct-1", amount: 10 };
  const s = setup("send_payment", args);
  const paused = await pause(s, args);
  const req = paused.content.find((p) => p.type === "tool-approval-request");
  s.messages.push({ role: "tool", content: [{ type: "tool-approval-response", approvalId: req.approvalId, approved: true }] });
  const done = await s.generate();
  assert.deepEqual(s.ran.send_payment, []);
  assert.match(done.text, /^model saw: rein has not approved send_payment yet: still pending/);
});

test("a throttled call never runs and the model reads when to retry", async () => {
  const s = setup("get_weather", { city: "x" });
  const ran = [];
  const tools = reinTools(rein, {
    send_email: tool({ description: "Send mail", inputSchema: z.object({ to: z.string() }),
      execute: async (a) => (ran.push(a), `sent to ${a.to}`) }),
  }, { session: s.session });
  const run = (to, id) => generateText({ model: scriptedModel("send_email", { to }, id), tools,
    messages: [{ role: "user", content: "mail" }], stopWhen: stepCountIs(5), ...approval(tools) });
  assert.equal((await run("a@example.com", `m1-${s.session}`)).text, "model saw: sent to a@example.com");
  const second = await run("b@example.com", `m2-${s.session}`);
  assert.deepEqual(ran, [{ to: "a@example.com" }]);
  assert.match(second.text, new RegExp("^model saw: " + refused("rein throttled send_email: .* \\(retry in \\d+ s\\)$")));
});

test("a tool call id seen again gets a new decision, not the stored allow", async () => {
  const s = setup("get_weather", { city: "x" });
  const ran = [];
  const tools = reinTools(rein, {
    send_email: tool({ description: "Send mail", inputSchema: z.object({ to: z.string() }),
      execute: async (a) => (ran.push(a), `sent to ${a.to}`) }),
  }, { session: s.session });
  const run = () => generateText({ model: scriptedModel("send_email", { to: "a@example.com" }, `same-${s.session}`), tools,
    messages: [{ role: "user", content: "mail" }], stopWhen: stepCountIs(5), ...approval(tools) });
  assert.equal((await run()).text, "model saw: sent to a@example.com");
  assert.match((await run()).text, new RegExp("^model saw: " + refused("rein throttled send_email")), "the rate limit holds for a repeated call id");
  assert.deepEqual(ran, [{ to: "a@example.com" }]);
});

test("rein unreachable: the tool never runs", async () => {
  const ran = [];
  const down = new ReinClient({ server: "http://127.0.0.1:9", key: "rein_x" });
  const tools = reinTools(down, {
    get_weather: tool({ description: "Weather of a city", inputSchema: z.object({ city: z.string() }),
      execute: async (a) => (ran.push(a), `sunny in ${a.city}`) }),
  }, { session: newSession("ai") });
  const go = () => generateText({ model: scriptedModel("get_weather", { city: "Oslo" }, `down-${Date.now()}`), tools,
    messages: [{ role: "user", content: "weather" }], stopWhen: stepCountIs(5), ...approval(tools) });
  if (mode === "toolApproval") {
    assert.match((await go()).text, /^model saw: denied: rein could not check get_weather, so it does not run: /);
  } else {
    await assert.rejects(go(), "needsApproval's error ends the call");
  }
  assert.deepEqual(ran, []);
});

if (mode === "toolApproval") {
  test("toolApproval keeps the needsApproval of tools rein does not wrap", async () => {
    const session = newSession("ai");
    const ran = [];
    const guarded = reinTools(rein, {
      get_weather: tool({ description: "Weather", inputSchema: z.object({ city: z.string() }), execute: async (a) => `sunny in ${a.city}` }),
    }, { session });
    const tools = { ...guarded,
      local_shell: tool({ description: "Shell", inputSchema: z.object({ cmd: z.string() }), needsApproval: true,
        execute: async (a) => (ran.push(a), "ran") }) };
    const result = await generateText({ model: scriptedModel("local_shell", { cmd: "ls" }, `sh-${session}`), tools,
      messages: [{ role: "user", content: "ls" }], stopWhen: stepCountIs(5), toolApproval: reinToolApproval(tools) });
    assert.deepEqual(ran, []);
    const req = result.content.filter((p) => p.type === "tool-approval-request");
    assert.deepEqual(req.map((p) => [p.toolCall.toolName, !!p.isAutomatic]), [["local_shell", false]]);
    assert.deepEqual(await reinApprovalResponses(rein, tools, result.content), [], "rein answers only for its own tools");
  });
}
});
}
