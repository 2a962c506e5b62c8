#!/usr/bin/env bash
# bench/pg-scifact.sh: SciFact's training queries asked of kbq serve over
# the artifact and of kbq serve --db over the same artifact published into
# PostgreSQL, hybrid (all-MiniLM-L6-v2) and lexical; prints how far the
# top 10 agree. Building the vectors takes about 8 minutes on 2 cores.
#
#   bench/pg-scifact.sh                 the model from $KBQ_MODELS (kbq's default)
#   REPO=/tmp/sf bench/pg-scifact.sh    keep the built repository in /tmp/sf
#
# Needs Go, git, PostgreSQL and the model; exits 0 without measuring when
# the dataset is not there.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/lib.sh"
data=${SHARED:-$root/../shared}/datasets/scifact
if [ ! -f "$data/corpus.jsonl" ]; then
	echo "bench: $data/corpus.jsonl not found; nothing to measure" >&2
	exit 0
fi
bench_setup ./bench/beir2kb ./bench/sameresults
repo=${REPO:-$work/repo}
if [ ! -d "$repo/.kbq" ]; then
	mkdir -p "$repo"
	cd "$repo"
	git init -q -b main
	beir2kb "$data/corpus.jsonl" .kb/corpus
	git add -A
	git -c user.name=bench -c user.email=bench@example.com commit -q -m scifact
	kbc build --rev HEAD --no-global --embed all-MiniLM-L6-v2 2>&1 | tail -1
fi

pg_start
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; bench_cleanup' EXIT
export KBQ_DATABASE_URL="$pg_server/postgres?sslmode=disable"
export XDG_CACHE_HOME=$work/cache KBQ_USAGE=off

cd "$repo"
kbc publish --repo scifact 2>&1 | tail -1
a=127.0.0.1:$(free_port) b=127.0.0.1:$(free_port)
[ "$a" != "$b" ] || b=127.0.0.1:$(free_port)
kbq serve --addr "$a" --index "$repo/.kbq" 2>/dev/null &
pids+=($!)
kbq serve --addr "$b" --db env 2>/dev/null &
pids+=($!)
for i in $(seq 1 100); do
	curl -fs "http://$a/healthz" >/dev/null 2>&1 && curl -fs "http://$b/healthz" >/dev/null 2>&1 && break
	sleep 0.2
done
for mode in hybrid lexical; do
	sameresults -a "http://$a" -b "http://$b" -queries "$data/queries.jsonl" -qrels "$data/qrels/train.tsv" -mode "$mode"
done
