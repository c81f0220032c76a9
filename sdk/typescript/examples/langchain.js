// A LangChain agent whose tools are left as they are: rein's middleware
// checks every tool call, against `rein serve --policy examples/policy.yaml`:
//   REIN_KEY=<an agent key> node examples/langchain.js
// The scripted model stands in for a real one (e.g. new ChatOpenAI({ model: "gpt-4.1" })).
import { createAgent } from "langchain";
import { fakeModel } from "@langchain/core/testing";
import { tool } from "@langchain/core/tools";
import { AIMessage } from "@langchain/core/messages";
import { Command, MemorySaver } from "@langchain/langgraph";
import { z } from "zod";
import { ReinClient } from "@reinhq/rein";
import { reinMiddleware, reinResume } from "@reinhq/rein/langchain";

const rein = new ReinClient();

const transfer = tool(async ({ to, amount }) => `sent ${amount} to ${to}`, {
  name: "payments_transfer",
  description: "Send money to an account",
  schema: z.object({ to: z.string(), amount: z.number() }),
});

const model = fakeModel()
  .respondWithTools([{ name: "payments_transfer", args: { to: "acct-7", amount: 500 }, id: "call-1" }])
  .respond((messages) => new AIMessage(`done: ${messages.at(-1).content}`));

const agent = createAgent({
  model,
  tools: [transfer],
  middleware: [reinMiddleware(rein, { toolName: { payments_transfer: "payments.transfer" } })],
  checkpointer: new MemorySaver(),
});
const config = { configurable: { thread_id: `payments-${Date.now()}` } }; // the thread is rein's session

let result = await agent.invoke({ messages: [{ role: "user", content: "Pay invoice 42 (500 to acct-7)" }] }, config);
while (result.__interrupt__?.length) {
  for (const i of result.__interrupt__) console.log(`waiting for approval: rein approve ${i.value.rein.approvalId}`);
  const resume = await reinResume(rein, result.__interrupt__, { timeoutMs: 10 * 60_000 });
  result = await agent.invoke(new Command({ resume }), config);
}
console.log(result.messages.at(-1).content);
