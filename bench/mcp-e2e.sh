#!/usr/bin/env bash
# bench/mcp-e2e.sh: drives kbq's MCP servers with a client that is not ours,
# the TypeScript SDK's (@modelcontextprotocol/sdk from npm): over stdio
# (kbq mcp) and over Streamable HTTP (kbq serve, /mcp). It initializes,
# lists the tools, calls each one, and checks the results and the errors for
# bad arguments. Then the writing server (kbc mcp): remember, write and
# forget, each seen by the next search, and the writes it must refuse; and
# kbq mcp started before any artifact exists. Needs Go, git, Node.js 18+
# and the npm registry. .ci/run runs it when node is installed.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/lib.sh"
bench_setup

repo=$work/repo
mkdir -p "$repo/.kb/memories" "$repo/services/api/.kb"
cd "$repo"
git init -q -b main
cat >.kb/context.md <<'MD'
Services talk through the message bus.
MD
cat >.kb/deploy.md <<'MD'
---
title: Deploying
tags: [ops]
---
# Deploying

Deploy with make deploy. Roll back with make rollback VERSION=<tag>.
MD
cat >.kb/memories/001-retries.md <<'MD'
---
id: 1
created: 2024-05-01T10:00:00Z
---
Retry the billing API with exponential backoff.
MD
cat >services/api/.kb/deploy.md <<'MD'
# Deploying the API

The API deploys with helm upgrade.
MD
git add -A
git -c user.name=e2e -c user.email=e2e@example.com commit -q -m knowledge
kbc build --no-global

client=$work/client
mkdir -p "$client"
cd "$client"
npm init -y >/dev/null
npm install --silent --no-audit --no-fund @modelcontextprotocol/sdk@1 >/dev/null
cat >e2e.mjs <<'JS'
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import assert from "node:assert/strict";

const [mode, target] = process.argv.slice(2);
const transport = mode === "stdio"
  ? new StdioClientTransport({ command: "kbq", args: ["mcp"], cwd: target, stderr: "inherit" })
  : new StreamableHTTPClientTransport(new URL(target));
const client = new Client({ name: "kbq-e2e", version: "1.0.0" });
await client.connect(transport);

const info = client.getServerVersion();
assert.equal(info.name, "kbq");
const { tools } = await client.listTools();
assert.deepEqual(tools.map((t) => t.name).sort(),
  ["knowledge_context", "knowledge_get", "knowledge_list", "knowledge_search"]);
for (const t of tools) {
  assert.ok(t.description.length > 80, `${t.name} has a description`);
  assert.equal(t.inputSchema.type, "object");
  assert.equal(t.annotations?.readOnlyHint, true);
}

const text = (r) => r.content.filter((c) => c.type === "text").map((c) => c.text).join("");

let r = await client.callTool({ name: "knowledge_search", arguments: { query: "how do we roll back a deploy?", n: 2 } });
assert.ok(!r.isError, text(r));
assert.equal(r.structuredContent.results[0].path, ".kb/deploy.md");
assert.deepEqual(Object.keys(r.structuredContent.results[0]).sort(),
  ["author", "channels", "commit", "content", "heading", "kind", "lines", "path", "scope", "score", "snippet", "tags", "topic", "updated"]);
assert.match(text(r), /## 1\. Deploying/);

r = await client.callTool({ name: "knowledge_search", arguments: { query: "deploy", dir: "services/api" } });
assert.equal(r.structuredContent.results[0].path, "services/api/.kb/deploy.md");

r = await client.callTool({ name: "knowledge_get", arguments: { ref: "memory:1" } });
assert.ok(!r.isError);
assert.match(text(r), /exponential backoff/);
assert.equal(r.structuredContent.kind, "memory");

r = await client.callTool({ name: "knowledge_list", arguments: { kind: "memory" } });
assert.equal(r.structuredContent.documents.length, 1);

r = await client.callTool({ name: "knowledge_context", arguments: {} });
assert.match(text(r), /### Project Context/);

for (const [name, args] of [
  ["knowledge_search", { query: "" }],
  ["knowledge_search", { query: "x", n: 1000 }],
  ["knowledge_search", { query: "x", kind: "pets" }],
  ["knowledge_get", { ref: "no/such/topic" }],
]) {
  r = await client.callTool({ name, arguments: args });
  assert.equal(r.isError, true, `${name} ${JSON.stringify(args)} is a tool error`);
}
await client.ping();
await client.close();
console.log(`mcp e2e (${mode}): initialize, tools/list, 4 tools, 4 bad calls, ping: ok`);
JS

node e2e.mjs stdio "$repo"

port=$(free_port)
cd "$repo"
kbq serve --addr "127.0.0.1:$port" 2>"$work/serve.log" &
server_pid=$!
cd "$client"
for _ in $(seq 1 50); do
	curl -fs "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break
	sleep 0.1
done
node e2e.mjs http "http://127.0.0.1:$port/mcp"

kill "$server_pid" 2>/dev/null || true
wait "$server_pid" 2>/dev/null || true
server_pid=

cat >writer.mjs <<'JS'
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";

const [repo] = process.argv.slice(2);
const client = new Client({ name: "kbq-e2e-writer", version: "1.0.0" });
await client.connect(new StdioClientTransport({ command: "kbc", args: ["mcp"], cwd: repo, stderr: "ignore" }));
assert.equal(client.getServerVersion().name, "kbc");

const { tools } = await client.listTools();
const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
assert.deepEqual(Object.keys(byName).sort(), ["knowledge_context", "knowledge_forget", "knowledge_get",
  "knowledge_list", "knowledge_remember", "knowledge_search", "knowledge_write"]);
for (const n of ["knowledge_context", "knowledge_get", "knowledge_list", "knowledge_search"]) {
  assert.equal(byName[n].annotations.readOnlyHint, true, n);
  assert.equal(byName[n].annotations.idempotentHint, true, n);
}
assert.equal(byName.knowledge_forget.annotations.destructiveHint, true);
assert.equal(byName.knowledge_write.annotations.destructiveHint, true);
assert.equal(byName.knowledge_remember.annotations.destructiveHint, false);

const text = (r) => r.content.filter((c) => c.type === "text").map((c) => c.text).join("");
const call = (name, args) => client.callTool({ name, arguments: args });
const paths = async (q) => ((await call("knowledge_search", { query: q })).structuredContent?.results ?? []).map((x) => x.path);

// Remember: a file in the working tree, found by the next search.
let r = await call("knowledge_remember", { text: "The zeppelin hangar opens at dawn", tags: ["ops"] });
assert.ok(!r.isError, text(r));
const memory = r.structuredContent.path;
assert.match(memory, /^\.kb\/memories\/002-the-zeppelin-hangar-opens-at-dawn\.md$/);
assert.match(text(r), /a person reviews it in the pull request/);
assert.ok(fs.existsSync(path.join(repo, memory)));
assert.deepEqual(await paths("zeppelin hangar"), [memory]);

// A secret is refused, and nothing is written.
const key = ["-----BEGIN OPENSSH PRIVATE KEY-----",
  "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW",
  "QyNTUxOQAAACDh3mJiXqfakeKeyMaterialNotRealAtAll0123456789abcdef",
  "-----END OPENSSH PRIVATE KEY-----"].join("\n");
r = await call("knowledge_remember", { text: "deploy key:\n" + key });
assert.equal(r.isError, true);
assert.match(text(r), /private key/);
assert.equal(fs.readdirSync(path.join(repo, ".kb/memories")).length, 2);

// Topic keys that leave .kb/ are refused.
for (const topic of ["../evil", "/etc/passwd", "ops/../../evil", "memories/x"]) {
  r = await call("knowledge_write", { topic, content: "# Evil" });
  assert.equal(r.isError, true, topic);
}

// Write a topic, read it, replace it with the blob read; a stale blob is refused.
r = await call("knowledge_write", { topic: "ops/runbook", content: "# Runbook\n\nRestart the quokka service.", tags: ["ops"] });
assert.ok(!r.isError, text(r));
assert.equal(r.structuredContent.action, "created");
assert.equal((await paths("quokka service"))[0], ".kb/ops/runbook.md");
r = await call("knowledge_get", { ref: "ops/runbook" });
const blob = r.structuredContent.blob;
assert.match(blob, /^[0-9a-f]{40}$/);
r = await call("knowledge_write", { topic: "ops/runbook", content: "# Runbook\n\nRestart the wombat service." });
assert.equal(r.isError, true);
assert.match(text(r), /read it first/);
r = await call("knowledge_write", { topic: "ops/runbook", content: "# Runbook\n\nRestart the wombat service.", blob });
assert.ok(!r.isError, text(r));
assert.equal(r.structuredContent.action, "replaced");
assert.equal((await paths("wombat service"))[0], ".kb/ops/runbook.md");
r = await call("knowledge_write", { topic: "ops/runbook", content: "# Runbook\n\nLost update.", blob });
assert.equal(r.isError, true);
assert.match(text(r), /not the .* you read/);

// Forget removes it from the working tree and from search.
r = await call("knowledge_forget", { memory: "memory:2" });
assert.ok(!r.isError, text(r));
assert.ok(!fs.existsSync(path.join(repo, memory)));
assert.deepEqual(await paths("zeppelin hangar"), []);

r = await call("knowledge_remember", { text: "   " });
assert.equal(r.isError, true);
await client.close();
console.log("mcp e2e (kbc mcp): 7 tools, remember, write, replace, forget seen by search; secret, escaping keys, stale blob refused: ok");
JS
node writer.mjs "$repo"
status=$(git -C "$repo" status --porcelain .kb)
case $status in
*"?? .kb/ops/"*) ;;
*) echo "mcp e2e: the topic written is not in the working tree as an untracked file: $status" >&2; exit 1 ;;
esac
git -C "$repo" log --oneline | wc -l | grep -qx 1 || { echo "mcp e2e: a write made a commit" >&2; exit 1; }

# kbq mcp before any artifact exists: it answers, and says what to run.
empty=$work/empty
mkdir -p "$empty/.kb"
git -C "$empty" init -q -b main
cat >empty.mjs <<'JS'
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import assert from "node:assert/strict";
const client = new Client({ name: "kbq-e2e-empty", version: "1.0.0" });
await client.connect(new StdioClientTransport({ command: "kbq", args: ["mcp"], cwd: process.argv[2], stderr: "ignore" }));
const r = await client.callTool({ name: "knowledge_search", arguments: { query: "deploy" } });
assert.equal(r.isError, true);
assert.match(r.content[0].text, /kbc build/);
await client.close();
console.log("mcp e2e (no artifact): initialize, a tool error naming kbc build: ok");
JS
node empty.mjs "$empty"
