// A scripted MCP client on the official TypeScript SDK, used by rein's
// gateway tests. argv[2] is a JSON plan:
//   {"transport": "stdio", "command": "...", "args": [...], "env": {...}}
//   {"transport": "http", "url": "http://127.0.0.1:9000/mcp"}
//   "elicitation": "accept" | "decline" | "cancel" | "none" (no capability)
//   "steps": [{"op": "listTools"} | {"op": "call", "name": "...", "arguments": {...},
//              "timeout": ms (default 120000; 0 for the SDK default), "progress": true (ask for progress and
//              reset the timeout on it)}
//             | {"op": "ping"} | {"op": "listResources"} | {"op": "listPrompts"}]
// It prints one JSON object: {"results": [...], "elicitations": [...], "progress": [...]}.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const plan = JSON.parse(process.argv[2]);
const mode = plan.elicitation ?? "none";
const capabilities = mode === "none" ? {} : { elicitation: { form: {} } };
const client = new Client({ name: "rein-e2e-client", version: "1.0.0" }, { capabilities });
const elicitations = [];
const progress = [];
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
          // timeout 0: the SDK's own default (60 s), as a user's client has it.
          const opts = step.timeout === 0 ? {} : { timeout: step.timeout ?? 120000 };
          if (step.progress) {
            opts.resetTimeoutOnProgress = true;
            opts.onprogress = (p) => progress.push({ name: step.name, ms: Date.now() - started, ...p });
          }
          const r = await client.callTool({ name: step.name, arguments: step.arguments ?? {} }, undefined, opts);
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
process.stdout.write(JSON.stringify({ results, elicitations, progress }) + "\n");
await client.close().catch(() => {});
process.exit(0);
