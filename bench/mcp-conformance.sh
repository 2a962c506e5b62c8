#!/usr/bin/env bash
# bench/mcp-conformance.sh: runs the official MCP conformance suite
# (@modelcontextprotocol/conformance from npm) against kbq serve's /mcp for
# the scenarios server-initialize, ping, tools-list and
# dns-rebinding-protection, and prints its report. The suite needs
# fs.globSync (Node 22+); on older Node it runs under bun, also from npm.
# Needs Go, git, Node.js and the npm registry.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/lib.sh"
bench_setup
mkdir -p "$work/repo/.kb"
cd "$work/repo"
git init -q -b main
printf '# Deploy\n\nDeploy with make deploy.\n' >.kb/deploy.md
git add -A
git -c user.name=c -c user.email=c@example.com commit -q -m knowledge
kbc build --no-global

port=$(free_port)
kbq serve --addr "127.0.0.1:$port" 2>"$work/serve.log" &
server_pid=$!
for _ in $(seq 1 50); do
	curl -fs "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break
	sleep 0.1
done

mkdir -p "$work/suite"
cd "$work/suite"
npm init -y >/dev/null
npm install --silent --no-audit --no-fund @modelcontextprotocol/conformance bun >/dev/null
suite=node_modules/@modelcontextprotocol/conformance/dist/index.js
run=(node "$suite")
if ! node -e 'process.exit(typeof require("fs").globSync === "function" ? 0 : 1)' 2>/dev/null; then
	run=(node_modules/.bin/bun "$suite")
fi
status=0
for scenario in server-initialize ping tools-list dns-rebinding-protection; do
	echo "== $scenario"
	"${run[@]}" server --url "http://localhost:$port/mcp" --scenario "$scenario" || status=1
done
exit $status
