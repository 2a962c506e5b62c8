#!/usr/bin/env bash
# bench/mcp-e2e.sh: drives kbq's MCP servers with a client that is not ours,
# the TypeScript SDK's (@modelcontextprotocol/sdk from npm): over stdio
# (kbq mcp) and over Streamable HTTP (kbq serve, /mcp). It initializes,
# lists the tools, calls each one, and checks the results and the errors for
# bad arguments. Needs Go, git, Node.js 18+ and the npm registry. .ci/run
# runs it when node is installed.
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
  ["content", "heading", "kind", "lines", "path", "scope", "score", "snippet", "tags", "topic"]);
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

port=$((20000 + RANDOM % 20000))
cd "$repo"
kbq serve --addr "127.0.0.1:$port" 2>"$work/serve.log" &
server_pid=$!
cd "$client"
for _ in $(seq 1 50); do
	curl -fs "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break
	sleep 0.1
done
node e2e.mjs http "http://127.0.0.1:$port/mcp"
