// An MCP server on the official TypeScript SDK over streamable HTTP, used
// as an --upstream-url upstream in rein's gateway tests. It prints
// "listening on http://127.0.0.1:PORT/mcp" once ready. Tools: echo (returns
// its text) and notes_write (records a note; the test checks it never ran
// when rein denied it).
import { createServer } from "node:http";
import { randomUUID } from "node:crypto";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { z } from "zod";

const notes = [];
const transports = new Map();

function newServer() {
  const server = new McpServer({ name: "notes", version: "1.0.0" });
  server.registerTool("echo", { description: "Echo text", inputSchema: { text: z.string() } },
    async ({ text }) => ({ content: [{ type: "text", text: `echo: ${text}` }] }));
  server.registerTool("notes_write", { description: "Write a note", inputSchema: { text: z.string() } },
    async ({ text }) => { notes.push(text); return { content: [{ type: "text", text: `noted (${notes.length})` }] }; });
  server.registerTool("notes_count", { description: "How many notes were written", inputSchema: {} },
    async () => ({ content: [{ type: "text", text: String(notes.length) }] }));
  return server;
}

const http = createServer(async (req, res) => {
  const chunks = [];
  for await (const c of req) chunks.push(c);
  const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString()) : undefined;
  const id = req.headers["mcp-session-id"];
  let transport = id && transports.get(id);
  if (!transport) {
    transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (sid) => transports.set(sid, transport),
    });
    await newServer().connect(transport);
  }
  await transport.handleRequest(req, res, body);
});
http.listen(0, "127.0.0.1", () => {
  console.log(`listening on http://127.0.0.1:${http.address().port}/mcp`);
});
