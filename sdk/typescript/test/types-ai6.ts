// Compiled by tsc -p tsconfig.ai6.json (go test ./e2e -run
// TestSDKTypeScriptTypes), never run: the AI SDK adapter's declarations
// against AI SDK 6, installed here as "ai6" and resolved as "ai".
import { ReinClient } from "@reinhq/rein";
import { reinTools, reinApprovalResponses } from "@reinhq/rein/ai-sdk";
import { generateText, stepCountIs, tool, type ModelMessage, type LanguageModel } from "ai";
import { z } from "zod";

async function usage(): Promise<void> {
  const rein = new ReinClient();
  const tools = reinTools(rein, {
    send_payment: tool({
      description: "Send money",
      inputSchema: z.object({ to: z.string(), amount: z.number() }),
      execute: async ({ to, amount }) => `paid ${amount} to ${to}`,
    }),
  }, { session: (o) => String(o.experimental_context ?? "run-6") });
  const messages: ModelMessage[] = [{ role: "user", content: "pay" }];
  const model = "some-model" as unknown as LanguageModel;
  const step = await generateText({ model, tools, messages, stopWhen: stepCountIs(5) });
  messages.push(...step.response.messages, { role: "tool", content: await reinApprovalResponses(rein, tools, step.content) });
}
void usage;
