#!/usr/bin/env bash
# bench/watch-latency.sh [-x SCALE] [-r RUNS]: how long after an edit is
# saved kbq search finds it while kbc watch runs, on the PowerShell-Docs
# corpus (../shared/corpora). Each run appends a new word to a file, then
# runs kbq search for it until it is found; the time from the write to the
# first search that finds it (that search included) is the latency.
# Prints min, median and max. Target: at most 1 s.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/lib.sh"
scale=1 runs=10
while getopts x:r: opt; do
	case $opt in
	x) scale=$OPTARG ;;
	r) runs=$OPTARG ;;
	*) exit 2 ;;
	esac
done
corpus=$root/../shared/corpora/powershell-docs.tar.gz
[ -f "$corpus" ] || { echo "watch-latency: $corpus is absent" >&2; exit 0; }
bench_setup
repo=$work/repo
corpus_repo "$repo" "$corpus" "$scale" >/dev/null
cd "$repo"
kbc watch --no-global >"$work/watch.out" 2>"$work/watch.err" &
server_pid=$!
for _ in $(seq 1 600); do
	grep -q 'watching' "$work/watch.err" && break
	sleep 0.1
done
grep -m1 'built' "$work/watch.err"
target=$(git ls-files .kb | grep 'Start-Transcript.md$' | head -1)
ms=()
for i in $(seq 1 "$runs"); do
	word="zqxwatch$i$RANDOM"
	start=$(date +%s%N)
	printf '\nThe %s marker.\n' "$word" >>"$target"
	until kbq search "$word" >/dev/null 2>&1; do :; done
	end=$(date +%s%N)
	ms+=($(((end - start) / 1000000)))
	sleep 0.3
done
sorted=$(printf '%s\n' "${ms[@]}" | sort -n)
n=${#ms[@]}
echo "edit to searchable, ${scale}x PowerShell-Docs, $n runs (ms): min $(echo "$sorted" | head -1), median $(echo "$sorted" | sed -n "$(((n + 1) / 2))p"), max $(echo "$sorted" | tail -1)"
echo "all: ${ms[*]}"
