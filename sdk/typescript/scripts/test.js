#!/usr/bin/env node
// `npm test`: runs the package's tests against a real rein.
//
// With REIN_SERVER, REIN_KEY (an agent of tenant acme) and REIN_APPROVER_KEY
// set (go test ./e2e -run TestSDKTypeScript does), the tests use that
// server. Otherwise this script starts one: the binary REIN_BIN, else rein
// built from this checkout with `go build`, else `rein` on PATH, serving
// sdk/testdata/policy.yaml from a temporary directory; and stops it after.
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const pkg = dirname(dirname(fileURLToPath(import.meta.url)));
const root = join(pkg, "..", "..");
const vars = ["REIN_SERVER", "REIN_KEY", "REIN_APPROVER_KEY"];

function onPath(name) {
  try {
    return execFileSync("sh", ["-c", `command -v ${name}`], { encoding: "utf8" }).trim();
  } catch {
    return "";
  }
}

function binary(tmp) {
  if (process.env.REIN_BIN) return process.env.REIN_BIN;
  if (existsSync(join(root, "cmd", "rein")) && onPath("go")) {
    const out = join(tmp, "rein");
    execFileSync("go", ["build", "-o", out, "./cmd/rein"], { cwd: root, stdio: "inherit" });
    return out;
  }
  const found = onPath("rein");
  if (found) return found;
  throw new Error("npm test starts rein: set REIN_BIN, run it in a checkout of rein with Go installed, or put rein on PATH");
}

async function startRein(tmp) {
  const bin = binary(tmp);
  const data = join(tmp, "data");
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("REIN_")));
  const policy = join(root, "sdk", "testdata", "policy.yaml");
  const proc = spawn(bin, ["serve", "--data", data, "--listen", "127.0.0.1:0", "--policy", policy], {
    env,
    stdio: ["ignore", "pipe", "inherit"],
  });
  const server = await new Promise((resolve, reject) => {
    let buf = "";
    const timer = setTimeout(() => reject(new Error("rein serve printed no listening address within 30 s")), 30000);
    proc.stdout.setEncoding("utf8");
    proc.stdout.on("data", (chunk) => {
      buf += chunk;
      const m = buf.match(/rein is listening on (\S+)/);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    proc.on("exit", (code) => reject(new Error(`rein serve exited (${code}) before listening`)));
  });
  proc.stdout.resume();
  const admin = readFileSync(join(data, "admin.key"), "utf8").trim();
  const key = (name, role) =>
    JSON.parse(
      execFileSync(bin, ["keys", "create", name, "--role", role, "--tenant", "acme", "--output", "json"], {
        env: { ...env, REIN_SERVER: server, REIN_KEY: admin },
        encoding: "utf8",
      }),
    ).key;
  return { proc, env: { REIN_SERVER: server, REIN_KEY: key("builder", "agent"), REIN_APPROVER_KEY: key("alice", "approver") } };
}

const given = vars.filter((v) => process.env[v]);
if (given.length !== 0 && given.length !== vars.length) {
  console.error(`set all of ${vars.join(", ")} or none (then npm test starts rein itself)`);
  process.exit(2);
}
let rein;
const tmp = mkdtempSync(join(tmpdir(), "rein-ts-"));
let code = 1;
try {
  const env = { ...process.env };
  if (given.length === 0) {
    rein = await startRein(tmp);
    Object.assign(env, rein.env);
  }
  const files = (process.argv.length > 2 ? process.argv.slice(2) : readdirSync(join(pkg, "test")).filter((f) => f.endsWith(".test.js")).map((f) => join("test", f)));
  const run = spawn(process.execPath, ["--test", "--test-reporter=spec", ...files], { cwd: pkg, env, stdio: "inherit" });
  code = await new Promise((resolve) => run.on("exit", (c, sig) => resolve(c ?? (sig ? 1 : 0))));
} catch (e) {
  console.error(e.message);
} finally {
  if (rein) {
    rein.proc.kill("SIGTERM");
    await new Promise((resolve) => (rein.proc.exitCode !== null ? resolve() : rein.proc.on("exit", resolve)));
  }
  rmSync(tmp, { recursive: true, force: true });
}
process.exit(code);
