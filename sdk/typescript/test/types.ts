// Compiled by tsc (go test ./e2e -run TestSDKTypeScriptTypes), never run:
// the declarations describe the package as TypeScript users import it.
import { DeniedError, ReinClient, ReinError, type CheckResponse, type WaitResult } from "@reinhq/rein";
import { reinResume, reinTools, type HITLResponse } from "@reinhq/rein/langgraph";
import { reinMiddleware } from "@reinhq/rein/langchain";
import { createAgent } from "langchain";
import { MemorySaver } from "@langchain/langgraph";
import { reinTool as agentsTool, applyReinDecisions } from "@reinhq/rein/openai-agents";
import { Agent, run } from "@openai/agents";
import { reinTools as aiTools, reinApprovalResponses, reinToolApproval } from "@reinhq/rein/ai-sdk";
import { generateText, stepCountIs, tool as aiTool, type ModelMessage, type LanguageModel } from "ai";
import { tool } from "@langchain/core/tools";
import { z } from "zod";

async function usage(): Promise<void> {
  const rein = new ReinClient({ server: "http://127.0.0.1:8750", key: "rein_..." });
  const res: CheckResponse = await rein.check({ tool: "shell.exec", args: { command: "ls" }, session: "run-1" });
  if (res.decision === "ask" && res.approval) {
    const w: WaitResult = await rein.wait(res.approval.id, { timeoutMs: 1000 });
    console.log(w.decision, w.args);
  }
  try {
    const out: string = await rein.guard("fs.read", { path: "a" }, async (args) => String(args.path), { session: "s" });
    console.log(out);
  } catch (e) {
    if (e instanceof DeniedError) console.log(e.decision, e.reason, e.pending);
    if (e instanceof ReinError) console.log(e.status, e.code);
  }
  const answer: unknown = await rein.askAndWait({ text: "Which region?", choices: ["eu", "us"] }, { timeoutMs: 1000 });
  console.log(answer);

  const tools = reinTools(rein, [tool(async ({ city }) => `sunny in ${city}`, { name: "get_weather", description: "weather", schema: z.object({ city: z.string() }) })]);
  const resume: Record<string, HITLResponse> = await reinResume(rein, [], { timeoutMs: 5000 });
  console.log(tools.length, resume);
  const lcAgent = createAgent({ model: "openai:gpt-4.1", tools, middleware: [reinMiddleware(rein, { session: "run-3", tools: ["get_weather"] })],
    checkpointer: new MemorySaver() });
  console.log(lcAgent);

  const pay = agentsTool(rein, {
    name: "send_payment",
    description: "Send money",
    parameters: z.object({ to: z.string(), amount: z.number() }),
    execute: async ({ to, amount }) => `paid ${amount} to ${to}`,
  }, { session: "run-1" });
  const agent = new Agent({ name: "payer", tools: [pay] });
  const result = await run(agent, "pay");
  const applied = await applyReinDecisions(rein, result, { timeoutMs: 60000 });
  if (applied.every((d) => d.approved)) await run(agent, result.state);

  const aiTs = aiTools(rein, {
    send_payment: aiTool({
      description: "Send money",
      inputSchema: z.object({ to: z.string(), amount: z.number() }),
      execute: async ({ to, amount }) => `paid ${amount} to ${to}`,
    }),
  }, { session: "run-2" });
  const messages: ModelMessage[] = [{ role: "user", content: "pay" }];
  const model = "some-model" as unknown as LanguageModel;
  const step = await generateText({ model, tools: aiTs, messages, stopWhen: stepCountIs(5), toolApproval: reinToolApproval(aiTs) });
  const responses = await reinApprovalResponses(rein, aiTs, step.content, { timeoutMs: 60000 });
  messages.push(...step.response.messages, { role: "tool", content: responses });
}
void usage;
