#!/usr/bin/env bash
# bench/serve-load.sh: kbq serve under load and faults, on the PowerShell-Docs
# artifact (SCALE copies of it: SCALE=30 for the scale target). wrk drives 32 connections for 30 s over ten searches while kbc
# rebuilds and republishes the artifact twice; then bench/faults holds 1000
# idle connections, sends a 10 MB request and hangs up mid-response. Prints
# requests/s, latency percentiles, errors and the server's peak RSS.
# Installs wrk with apt-get when missing. Exits 0 without measuring when the
# corpus is not there.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/lib.sh"
shared=${SHARED:-$root/../shared}
corpus=$shared/corpora/powershell-docs.tar.gz
duration=${DURATION:-30}
if [ ! -f "$corpus" ]; then
	echo "bench: $corpus not found; nothing to measure" >&2
	exit 0
fi
command -v wrk >/dev/null || { apt-get update -qq && apt-get install -y -qq wrk >/dev/null; }

bench_setup ./bench/faults

repo=$work/repo
corpus_repo "$repo" "$corpus" "${SCALE:-1}"
cd "$repo"
kbc build --no-global --keep-going 2>/dev/null

port=$(free_port)
kbq serve --addr "127.0.0.1:$port" 2>"$work/serve.log" &
server_pid=$!
for _ in $(seq 1 100); do
	curl -fs "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break
	sleep 0.1
done

cat >"$work/queries.lua" <<'LUA'
local queries = {
  "transcript", "execution+policy", "remote+session+credentials", "convert+json+to+object",
  "how+to+create+a+module+manifest", "set+an+environment+variable", "retries", "pipeline",
  "get+child+items+recursively", "start+a+background+job+and+wait",
}
local i = 0
request = function()
  i = i + 1
  return wrk.format("GET", "/search?q=" .. queries[(i % #queries) + 1])
end
LUA

# Two rebuilds during the run: a file changes, is committed, kbc publishes.
(
	target=$(git ls-files .kb | awk '/Start-Transcript\.md$/ && !t {t = $0} END {print t}')
	for at in 1 2; do
		sleep $((duration / 3))
		echo "rebuild $at: zeppelin$at" >>"$target"
		git commit -q -am "rebuild $at"
		kbc build --no-global --keep-going >/dev/null 2>&1
		echo "republished artifact $at" >&2
	done
) &
rebuild_pid=$!

wrk -t2 -c32 -d"${duration}s" --latency -s "$work/queries.lua" "http://127.0.0.1:$port" | tee "$work/wrk.txt"
wait $rebuild_pid
curl -fs "http://127.0.0.1:$port/search?q=zeppelin2" | grep zeppelin2 >/dev/null && echo "the second republished artifact is served"

faults -addr "127.0.0.1:$port"

rss=$(awk '/VmHWM/ {print $2}' "/proc/$server_pid/status")
echo
echo "requests/s:      $(awk '/Requests\/sec/ {print $2}' "$work/wrk.txt")"
echo "latency p50/p99: $(awk '$1=="50%" {p50=$2} $1=="99%" {p99=$2} END {print p50 " / " p99}' "$work/wrk.txt")"
errors=$(awk '/Non-2xx/ {n+=$NF} /Socket errors/ {gsub(/,/,""); n+=$4+$6+$8+$10} END {print n+0}' "$work/wrk.txt")
echo "errors:          $errors"
echo "peak RSS:        $((rss / 1024)) MB"
[ "$errors" -eq 0 ]
