#!/usr/bin/env bash
# bench/scifact.sh: retrieval quality on the SciFact training split
# (../shared/datasets/scifact): each abstract becomes a markdown file with
# its title in the frontmatter, committed to a temporary git repository,
# compiled with kbc, and scored with kbq eval against the judged queries.
#
#   bench/scifact.sh                      default analysis and ranking
#   bench/scifact.sh -- --k1 0.9 --b 0.4  extra kbq eval flags
#   STEMMER=porter2 STOPWORDS=snowball bench/scifact.sh
#   EMBED=all-MiniLM-L6-v2 bench/scifact.sh -- --mode hybrid
#                                         with vectors (the model in $KBQ_MODELS)
#   REPO=/tmp/sf EMBED=all-MiniLM-L6-v2 bench/scifact.sh -- --mode semantic
#                                         keep the built repository in /tmp/sf, and
#                                         only evaluate when it is there already
#
# Exits 0 without measuring when the dataset is not there.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
data=${SHARED:-$root/../shared}/datasets/scifact
if [ ! -f "$data/corpus.jsonl" ]; then
	echo "bench: $data/corpus.jsonl not found; nothing to measure" >&2
	exit 0
fi
[ "${1:-}" = "--" ] && shift
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$root" && CGO_ENABLED=0 go build -o "$work/bin/" ./cmd/kbc ./cmd/kbq ./bench/beir2kb)
repo=${REPO:-$work/repo}
if [ ! -d "$repo/.kbq" ]; then
	mkdir -p "$repo"
	cd "$repo"
	git init -q -b main
	"$work/bin/beir2kb" "$data/corpus.jsonl" .kb/corpus
	git add -A
	git -c user.name=bench -c user.email=bench@example.com commit -q -m scifact
	"$work/bin/kbc" build --no-global ${EMBED:+--embed "$EMBED"} ${STEMMER:+--stemmer "$STEMMER"} ${STOPWORDS:+--stopwords "$STOPWORDS"}
fi
cd "$repo"
"$work/bin/kbq" eval --beir "$data/queries.jsonl" "$data/qrels/train.tsv" "$@"
