// An OpenAI Agents JS agent whose payment tool is guarded by rein,
// against `rein serve --policy examples/policy.yaml`:
//   REIN_KEY=<an agent key> node examples/openai-agents.js
// The scripted model stands in for a real one (drop `model` to use OpenAI's default).
import { Agent, run, setTracingDisabled, Usage } from "@openai/agents";
import { z } from "zod";
import { ReinClient } from "@reinhq/rein";
import { reinTool, applyReinDecisions } from "@reinhq/rein/openai-agents";

setTracingDisabled(true);
const rein = new ReinClient();
const session = `payments-${Date.now()}`;

const transfer = reinTool(rein, {
  name: "payments_transfer",
  description: "Send money to an account",
  parameters: z.object({ to: z.string(), amount: z.number() }),
  execute: async ({ to, amount }) => `sent ${amount} to ${to}`,
}, { toolName: "payments.transfer", session });

const script = [
  [{ type: "function_call", callId: "call-1", name: "payments_transfer", arguments: '{"to":"acct-7","amount":500}', status: "completed" }],
  [{ type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text: "payment handled" }] }],
];
const model = {
  async getResponse() { return { usage: new Usage(), output: script.shift() }; },
  async *getStreamedResponse() { throw new Error("not scripted"); },
};

const agent = new Agent({ name: "payer", instructions: "Pay invoices.", model, tools: [transfer] });
let result = await run(agent, "Pay invoice 42 (500 to acct-7)");
while (result.interruptions?.length) {
  console.log(`waiting for approval of ${result.interruptions.map((i) => i.name).join(", ")}: rein approvals`);
  for (const d of await applyReinDecisions(rein, result, { timeoutMs: 10 * 60_000 })) {
    console.log(`${d.item.name}: ${d.approved ? "approved" : d.message}`);
  }
  result = await run(agent, result.state);
}
console.log(result.newItems.filter((i) => i.type === "tool_call_output_item").map((i) => i.output).join("\n"));
console.log(result.finalOutput);
