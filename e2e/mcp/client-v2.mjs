// A scripted MCP client on the official TypeScript SDK v2
// (@modelcontextprotocol/client, protocol 2026-07-28) and the official
// Tasks extension client (@modelcontextprotocol/ext-tasks), used by rein's
// gateway tests. argv[2] is a JSON plan:
//   {"command": "...", "args": [...], "env": {...},
//    "version": "2026-07-28" (pinned) | "legacy" (the 2025 handshake),
//    "elicitation": "accept" | "decline" | "none",
//    "steps": [{"op": "call", "name": "...", "arguments": {...}}
//              | {"op": "taskCall", "name": "...", "arguments": {...}}]}
// It prints one JSON object: {"version": "...", "results": [...], "elicitations": [...]}.
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { createTaskSessionFromClient, resultFromTaskOutcome } from "@modelcontextprotocol/ext-tasks/client";

const plan = JSON.parse(process.argv[2]);
const mode = plan.elicitation ?? "none";
const clientInfo = { name: "rein-e2e-client-v2", version: "1.0.0" };
const capabilities = mode === "none" ? {} : { elicitation: { form: {} } };
const client = new Client(clientInfo, {
  capabilities,
  versionNegotiation: plan.version === "legacy" ? { mode: "legacy" } : { mode: { pin: plan.version } },
});
const elicitations = [];
if (mode !== "none") {
  client.setRequestHandler("elicitation/create", async (req) => {
    elicitations.push({ message: req.params.message, schema: req.params.requestedSchema });
    if (mode === "accept") return { action: "accept", content: { note: "accepted in the v2 client" } };
    return { action: "decline" };
  });
}
const transport = new StdioClientTransport({ command: plan.command, args: plan.args, env: { ...process.env, ...(plan.env ?? {}) }, stderr: "inherit" });

// The Tasks client needs a raw request path for task results, which the
// SDK's own codecs do not carry: requests with string ids go out on the
// same transport and their responses are taken before the Client sees them.
const pending = new Map();
let rawNext = 0;
function rawDispatch(request) {
  const id = `raw-${++rawNext}`;
  return new Promise((resolve, reject) => {
    pending.set(id, resolve);
    transport.send({ ...request, jsonrpc: "2.0", id }).catch(reject);
  }).then((response) => ({ ...response, id: request.id }));
}

const text = (r) => (r?.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("\n");
const results = [];
try {
  await client.connect(transport);
  const onmessage = transport.onmessage;
  transport.onmessage = (msg, extra) => {
    if (msg && typeof msg.id === "string" && pending.has(msg.id) && !("method" in msg)) {
      const resolve = pending.get(msg.id);
      pending.delete(msg.id);
      resolve(msg);
      return;
    }
    onmessage?.(msg, extra);
  };
  const version = client.getNegotiatedProtocolVersion();
  results.push({ op: "connect", version, server: client.getServerVersion(), capabilities: client.getServerCapabilities() });
  let session;
  for (const step of plan.steps) {
    const started = Date.now();
    try {
      if (step.op === "call") {
        const r = await client.callTool({ name: step.name, arguments: step.arguments ?? {} }, { timeout: 60000 });
        results.push({ op: step.op, name: step.name, isError: r.isError === true, text: text(r), ms: Date.now() - started });
      } else if (step.op === "taskCall") {
        session ??= createTaskSessionFromClient(client, {
          endpointId: "rein-e2e",
          rawDispatch,
          v2RequestFraming: {
            protocolVersion: version,
            clientInfo,
            clientCapabilities: { ...capabilities, extensions: { "io.modelcontextprotocol/tasks": {} } },
          },
        });
        const execution = await session.callTool(step.name, step.arguments ?? {});
        const { outcome, lastTask } = await execution.settle();
        const r = outcome.status === "completed" ? resultFromTaskOutcome(outcome) : undefined;
        results.push({ op: step.op, name: step.name, kind: execution.kind, status: outcome.status, isError: r?.isError === true,
          text: text(r), taskStatus: lastTask?.status, ms: Date.now() - started });
      } else {
        results.push({ op: step.op, error: "unknown op" });
      }
    } catch (err) {
      results.push({ op: step.op, name: step.name, error: String(err?.message ?? err), code: err?.code });
    }
  }
  await session?.close?.().catch(() => {});
} catch (err) {
  results.push({ op: "connect", error: String(err?.stack ?? err) });
}
process.stdout.write(JSON.stringify({ results, elicitations }) + "\n");
await client.close().catch(() => {});
process.exit(0);
