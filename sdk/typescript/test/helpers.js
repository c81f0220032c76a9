// Shared by the tests: clients of the rein server the Go test started
// (REIN_SERVER, REIN_KEY for the agent, REIN_APPROVER_KEY for a person).
import { randomUUID } from "node:crypto";
import { ReinClient } from "../src/index.js";

for (const v of ["REIN_SERVER", "REIN_KEY", "REIN_APPROVER_KEY"]) {
  if (!process.env[v]) throw new Error(`${v} is not set: run the tests with npm test (it starts rein) or go test ./e2e -run TestSDKTypeScript`);
}

export const agent = new ReinClient();
export const approver = new ReinClient({ key: process.env.REIN_APPROVER_KEY });

/** A fresh session id, so that tests running at once never see each other's approvals. */
export const newSession = (prefix) => `${prefix}-${randomUUID()}`;

/** Waits for the one pending approval of session and returns it. */
export async function pendingApproval(session, timeoutMs = 10000) {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    const list = await approver.approvals({ status: "pending", session });
    if (list.length === 1) return list[0];
    if (list.length > 1) throw new Error(`session ${session} has ${list.length} pending approvals; want 1`);
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`no pending approval in session ${session} within ${timeoutMs} ms`);
}

/** A person votes on the pending approval of session, as the console would. */
export async function vote(session, kind, { message = "", args } = {}) {
  const a = await pendingApproval(session);
  return approver.vote(a.id, { vote: kind, message, args });
}
