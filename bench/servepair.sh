#!/usr/bin/env bash
# bench/servepair.sh OLD NEW [ROUNDS]: two kbq binaries serving the
# PowerShell docs at SCALE copies (default 30), alternating, ROUNDS
# (default 4) each. Every round starts the server on the artifact and
# measures warm /search latency with bench/httplat (ten queries, 20 rounds
# of each after one of warm-up), one request at a time. Prints each
# round's p50 and p99, and the medians of each binary. Build the binaries
# from two commits, e.g.
#
#   git worktree add /tmp/old HEAD~1 && (cd /tmp/old && go build -o /tmp/old/kbq ./cmd/kbq)
#   go build -o /tmp/new/kbq ./cmd/kbq && bench/servepair.sh /tmp/old/kbq /tmp/new/kbq
#
# Needs Go, git and the shared corpora; both binaries must read the
# artifact this tree's kbc builds.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/lib.sh"
old=$(realpath "$1") new=$(realpath "$2") rounds=${3:-4}
ps=${SHARED:-$root/../shared}/corpora/powershell-docs.tar.gz
if [ ! -f "$ps" ]; then
	echo "bench: the shared corpora are not there; nothing to measure" >&2
	exit 0
fi
bench_setup ./bench/httplat
export KBQ_USAGE=off
corpus_repo "$work/ps" "$ps" "${SCALE:-30}"
cd "$work/ps"
kbc build --rev HEAD --keep-going --no-global >/dev/null 2>&1
printf '%s\n' transcript "execution policy" "remote session credentials" "convert json to object" \
	"how to create a module manifest" "set an environment variable" retries pipeline \
	"get child items recursively" "start a background job and wait" >"$work/queries.txt"

measure() { # BIN: one round, "p50 p99" in ms
	local port
	port=$(free_port)
	httplat -url "http://127.0.0.1:$port" -q "$work/queries.txt" -rounds 20 \
		-start "exec $1 serve --addr 127.0.0.1:$port 2>/dev/null" |
		awk '/searches:/ {gsub(",", ""); print $4, $7}'
}
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

: >"$work/old.txt"
: >"$work/new.txt"
for i in $(seq 1 "$rounds"); do
	o=$(measure "$old")
	n=$(measure "$new")
	echo "round $i: old p50/p99 ${o/ //} ms, new ${n/ //} ms"
	echo "$o" >>"$work/old.txt"
	echo "$n" >>"$work/new.txt"
done
for who in old new; do
	echo "$who: median p50 $(cut -d' ' -f1 "$work/$who.txt" | median) ms, median p99 $(cut -d' ' -f2 "$work/$who.txt" | median) ms"
done
