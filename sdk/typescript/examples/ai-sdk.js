// A Vercel AI SDK tool loop whose payment tool is guarded by rein,
// against `rein serve --policy examples/policy.yaml`:
//   REIN_KEY=<an agent key> node examples/ai-sdk.js
// The mock model stands in for a real one (e.g. openai("gpt-4.1") from @ai-sdk/openai).
// Written for AI SDK 7; with AI SDK 6 leave out toolApproval (the tools'
// needsApproval asks rein) and read result.response.messages instead of
// result.responseMessages.
import { generateText, stepCountIs, tool } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { z } from "zod";
import { ReinClient } from "@reinhq/rein";
import { reinTools, reinApprovalResponses, reinToolApproval } from "@reinhq/rein/ai-sdk";

const rein = new ReinClient();
const tools = reinTools(rein, {
  payments_transfer: tool({
    description: "Send money to an account",
    inputSchema: z.object({ to: z.string(), amount: z.number() }),
    execute: async ({ to, amount }) => `sent ${amount} to ${to}`,
  }),
}, { toolName: "payments.transfer", session: `payments-${Date.now()}` });

const usage = { inputTokens: { total: 0, noCache: 0, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 0, text: 0, reasoning: 0 } };
const model = new MockLanguageModelV3({
  doGenerate: [
    { content: [{ type: "tool-call", toolCallId: "call-1", toolName: "payments_transfer", input: '{"to":"acct-7","amount":500}' }],
      finishReason: { unified: "tool-calls", raw: undefined }, usage, warnings: [] },
    { content: [{ type: "text", text: "payment handled" }], finishReason: { unified: "stop", raw: undefined }, usage, warnings: [] },
  ],
});

const messages = [{ role: "user", content: "Pay invoice 42 (500 to acct-7)" }];
for (;;) {
  const result = await generateText({ model, tools, messages, stopWhen: stepCountIs(5), toolApproval: reinToolApproval(tools) });
  messages.push(...result.responseMessages);
  const asks = result.content.filter((p) => p.type === "tool-approval-request");
  if (asks.length === 0) {
    const results = result.responseMessages.filter((m) => m.role === "tool").flatMap((m) => m.content);
    for (const r of results) if (r.type === "tool-result") console.log(r.output.value);
    console.log(result.text);
    break;
  }
  console.log(`waiting for approval of ${asks.map((a) => a.toolCall.toolName).join(", ")}: rein approvals`);
  messages.push({ role: "tool", content: await reinApprovalResponses(rein, tools, result.content, { timeoutMs: 10 * 60_000 }) });
}
