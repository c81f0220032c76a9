// A scripted MCP client on the official TypeScript SDK, used by rein's
// gateway tests. argv[2] is a JSON plan:
//   {"transport": "stdio", "command": "...", "args": [...], "env": {...}}
//   {"transport": "http", "url": "http://127.0.0.1:9000/mcp"}
//   "elicitation": "accept" | "decline" | "cancel" | "none" (no capability)
//   "steps": [{"op": "listTools"} | {"op": "call", "name": "...", "arguments": {...}}
//             | {"op": "ping"} | {"op": "listResources"} | {"op": "listPrompts"}]
// It prints one JSON object: {"results": [...], "elicitations": [...]}.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const plan = JSON.parse(process.argv[2]);
const mode = plan.elicitation ?? "none";
const capabilities = mode === "none" ? {} : { elicitation: { form: {} } };
const client = new Client({ name: "rein-e2e-client", version: "1.0.0" }, { capabilities });
const elicitations = [];
if (mode !== "none") {
  client.setRequestHandler(ElicitRequestSchema, async (req) => {
    elicitations.push({ message: req.params.message, schema: req.params.requestedSchema });
    if (mode === "accept") return { action: "accept", content: { note: "looks right" } };
    if (mode === "decline") return { action: "decline" };
    return { action: "cancel" };
  });
}

const transport = plan.transport === "http"
  ? new StreamableHTTPClientTransport(new URL(plan.url))
  : new StdioClientTransport({ command: plan.command, args: plan.args, env: { ...process.env, ...(plan.env ?? {}) }, stderr: "inherit" });

const results = [];
try {
  await client.connect(transport);
  results.push({ op: "connect", server: client.getServerVersion(), capabilities: client.getServerCapabilities() });
  for (const step of plan.steps) {
    const started = Date.now();
    console.error(`rein-e2e-client: ${step.op} ${step.name ?? ""}`);
    try {
      switch (step.op) {
        case "listTools": {
          const r = await client.listTools();
          results.push({ op: step.op, tools: r.tools.map((t) => t.name) });
          break;
        }
        case "call": {
          const r = await client.callTool({ name: step.name, arguments: step.arguments ?? {} }, undefined, { timeout: 120000 });
          const text = (r.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("\n");
          results.push({ op: step.op, name: step.name, isError: r.isError === true, text, ms: Date.now() - started });
          break;
        }
        case "ping":
          await client.ping();
          results.push({ op: step.op, ok: true });
          break;
        case "listResources":
          results.push({ op: step.op, resources: (await client.listResources()).resources });
          break;
        case "listPrompts":
          results.push({ op: step.op, prompts: (await client.listPrompts()).prompts });
          break;
        default:
          results.push({ op: step.op, error: "unknown op" });
      }
    } catch (err) {
      results.push({ op: step.op, name: step.name, error: String(err?.message ?? err), code: err?.code });
    }
  }
} catch (err) {
  results.push({ op: "connect", error: String(err?.message ?? err) });
}
process.stdout.write(JSON.stringify({ results, elicitations }) + "\n");
await client.close().catch(() => {});
process.exit(0);
