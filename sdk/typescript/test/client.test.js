// The plain client against rein: guard, errors, approvals, questions.
import { test } from "node:test";
import assert from "node:assert/strict";
import { DeniedError, ReinClient, ReinError, UnansweredError } from "../src/index.js";
import { agent as rein, approver, newSession, vote } from "./helpers.js";

test("guard runs allowed and modified calls with rein's arguments", async () => {
  const ran = [];
  const out = await rein.guard("get_weather", { city: "Paris" }, async (a) => (ran.push(a), `sunny in ${a.city}`));
  assert.equal(out, "sunny in Paris");
  await rein.guard("write_note", { text: "hi", secret: "hunter2" }, async (a) => ran.push(a));
  assert.deepEqual(ran, [{ city: "Paris" }, { text: "hi" }]);
});

test("guard throws DeniedError on deny and never runs the call", async () => {
  let ran = 0;
  await assert.rejects(rein.guard("delete_file", { path: "x" }, async () => ran++), (err) => {
    assert.ok(err instanceof DeniedError);
    assert.equal(err.decision, "deny");
    assert.equal(err.reason, "deleting files is not allowed");
    assert.equal(err.rule, "no-deletes");
    assert.match(err.checkId, /^chk_/);
    assert.equal(err.pending, false);
    return true;
  });
  assert.equal(ran, 0);
});

test("guard waits on ask and runs the approver's edit", async () => {
  const session = newSession("ts");
  const asked = [];
  const voting = vote(session, "edit", { args: { to: "acct-7", amount: 50 } });
  const out = await rein.guard("send_payment", { to: "acct-7", amount: 500 }, async (a) => `paid ${a.amount}`,
    { session, timeoutMs: 20000, onAsk: (res) => asked.push(res.approval.id) });
  await voting;
  assert.equal(out, "paid 50");
  assert.equal(asked.length, 1);
  assert.equal((await approver.approval(asked[0])).status, "consumed");
});

test("guard throws the approver's rejection", async () => {
  const session = newSession("ts");
  const voting = vote(session, "reject", { message: "wrong account" });
  let ran = 0;
  await assert.rejects(rein.guard("send_payment", { to: "acct-9", amount: 900 }, async () => ran++, { session, timeoutMs: 20000 }),
    (err) => err instanceof DeniedError && err.decision === "deny" && err.reason === "rejected by alice: wrong account"
      && err.approval.status === "rejected");
  await voting;
  assert.equal(ran, 0);
});

test("a wait that ends first throws a pending DeniedError", async () => {
  const session = newSession("ts");
  let ran = 0;
  const err = await rein.guard("send_payment", { to: "acct-3", amount: 5 }, async () => ran++, { session, timeoutMs: 300 })
    .then(() => assert.fail("ran without approval"), (e) => e);
  assert.ok(err instanceof DeniedError);
  assert.equal(err.pending, true);
  assert.equal(ran, 0);
  assert.equal((await rein.cancel(err.approvalId)).status, "cancelled");
});

test("API errors are ReinError with rein's code; an unreachable rein runs nothing", async () => {
  await assert.rejects(rein.check({ tool: "get_weather", args: {}, wait_ms: -1 }),
    (err) => err instanceof ReinError && err.status === 400 && err.code === "bad_request" && /wait_ms/.test(err.message));
  await assert.rejects(new ReinClient({ key: "rein_not_a_key" }).guard("get_weather", { city: "x" }, async () => assert.fail("ran")),
    (err) => err instanceof ReinError && err.code === "unauthenticated");
  await assert.rejects(new ReinClient({ server: "http://127.0.0.1:9", key: "x" }).guard("get_weather", { city: "x" }, async () => assert.fail("ran")),
    (err) => !(err instanceof DeniedError) && /rein at http:\/\/127\.0\.0\.1:9/.test(err.message));
});

test("the asking agent cannot vote on its own approval", async () => {
  const session = newSession("ts");
  const res = await rein.check({ tool: "send_payment", args: { to: "a", amount: 1 }, session });
  await assert.rejects(rein.approve(res.approval.id), (err) => err instanceof ReinError && err.status === 403);
  await rein.cancel(res.approval.id);
});

test("settled learns the outcome without using the grant; wait uses it once", async () => {
  const session = newSession("ts");
  const res = await rein.check({ tool: "send_payment", args: { to: "a", amount: 2 }, session });
  await vote(session, "approve");
  const a = await rein.settled(res.approval.id, { timeoutMs: 5000 });
  assert.equal(a.status, "approved");
  const first = await rein.wait(res.approval.id, { timeoutMs: 0 });
  assert.deepEqual([first.decision, first.args], ["allow", { to: "a", amount: 2 }]);
  const second = await rein.wait(res.approval.id, { timeoutMs: 0 });
  assert.equal(second.decision, "deny");
});

test("questions: ask and wait for the answer; a cancelled question is unanswered", async () => {
  const session = newSession("ts");
  const answering = (async () => {
    for (;;) {
      const qs = await approver.questions({ status: "pending", session });
      if (qs.length) return approver.answer(qs[0].id, "eu-west");
      await new Promise((r) => setTimeout(r, 50));
    }
  })();
  const answer = await rein.askAndWait({ text: "Which region?", session, choices: ["eu-west", "us-east"] }, { timeoutMs: 20000 });
  await answering;
  assert.equal(answer, "eu-west");

  const q = await rein.ask({ text: "Proceed?", session });
  await rein.cancelQuestion(q.id);
  await assert.rejects(rein.waitAnswer(q.id, { timeoutMs: 5000 }),
    (err) => err instanceof UnansweredError && err.question.status === "cancelled");
});

test("a throttle is a DeniedError with the retry time", async () => {
  const session = newSession("ts");
  let sent = 0;
  await rein.guard("send_email", { to: "a@example.com" }, async () => sent++, { session });
  await assert.rejects(rein.guard("send_email", { to: "b@example.com" }, async () => sent++, { session }),
    (err) => err instanceof DeniedError && err.decision === "throttle" && err.retryAfterMs > 0);
  assert.equal(sent, 1);
});
