#!/usr/bin/env bash
# bench/semantic.sh: semantic and hybrid search on the PowerShell-Docs corpus
# (../shared/corpora/powershell-docs.tar.gz), with all-MiniLM-L6-v2.
#
#   bench/semantic.sh          the corpus (3,088 files, 22,908 chunks): the
#                              full build with embeddings, a one-file edit,
#                              searches per process and in one process; then
#                              replicated 30 times, its vectors copied from
#                              the first build by blob, searched in one
#                              process and per process
#   bench/semantic.sh -x 1     the corpus only
#   ARTIFACT=DIR bench/semantic.sh
#                              reuse the vectors of an artifact built before
#                              (its .kbq directory), skipping the long build
#
# The model comes from $KBQ_MODELS, else it is downloaded into the user
# cache directory. The full build embeds every distinct chunk text: on the
# 2-core machine about 10 minutes. Needs Go and git; installs sqlite3 and
# hyperfine with apt-get when missing. Exits 0 without measuring when the
# corpus is not there.
set -euo pipefail

scales=1,30
while getopts "x:" opt; do
	case $opt in
	x) scales=$OPTARG ;;
	*) echo "usage: $0 [-x SCALES]" >&2; exit 2 ;;
	esac
done

root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/lib.sh"
shared=${SHARED:-$root/../shared}
corpus=$shared/corpora/powershell-docs.tar.gz
if [ ! -f "$corpus" ]; then
	echo "bench: $corpus not found; nothing to measure" >&2
	exit 0
fi
need sqlite3:sqlite3 hyperfine:hyperfine /usr/bin/time:time

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bin=$work/bin
(cd "$root" && CGO_ENABLED=0 go build -trimpath -ldflags=-s -o "$bin/" ./cmd/kbc ./cmd/kbq ./bench/searchlat)
kbc=$bin/kbc
kbq=$bin/kbq

queries=(
	"transcript"
	"execution policy"
	"remote session credentials"
	"convert json to object"
	"how to create a module manifest"
	"set an environment variable for the current session"
	"retries"
	"pipeline"
	"get child items recursively"
	"start a background job and wait"
)

# per_process: the median over the queries of hyperfine's mean, per mode,
# with sqlite3 FTS5 (the same words ORed, top 5 with snippets) beside them.
per_process() {
	local fts hyb=() lex=() sem=() sql=()
	if [ ! -f "$work/fts.db" ]; then
		sqlite3 "$work/fts.db" \
			"CREATE VIRTUAL TABLE docs USING fts5(path, body, tokenize='porter unicode61');
			 INSERT INTO docs(path, body) SELECT name, CAST(data AS TEXT) FROM fsdir('.kb') WHERE name LIKE '%.md';"
	fi
	for q in "${queries[@]}"; do
		fts=$(echo "$q" | awk '{for (i=1;i<=NF;i++) printf "%s%s", (i>1?" OR ":""), $i}')
		hyperfine -N -w 3 -r 20 --export-csv "$work/q.csv" -n hybrid -n lexical -n semantic -n sqlite3 \
			"$kbq search $q" "$kbq search --mode lexical $q" "$kbq search --mode semantic $q" \
			"sqlite3 $work/fts.db \"SELECT path, snippet(docs, 1, '[', ']', '…', 20) FROM docs WHERE docs MATCH '$fts' ORDER BY rank LIMIT 5\"" >/dev/null 2>&1
		hyb+=("$(awk -F, 'NR==2 {print $2*1000}' "$work/q.csv")")
		lex+=("$(awk -F, 'NR==3 {print $2*1000}' "$work/q.csv")")
		sem+=("$(awk -F, 'NR==4 {print $2*1000}' "$work/q.csv")")
		sql+=("$(awk -F, 'NR==5 {print $2*1000}' "$work/q.csv")")
		printf '  %-55s hybrid %6.1f  lexical %6.1f  semantic %6.1f  sqlite3 %6.1f ms\n' "\"$q\"" "${hyb[-1]}" "${lex[-1]}" "${sem[-1]}" "${sql[-1]}"
	done
	local h l s q
	h=$(printf '%s\n' "${hyb[@]}" | median)
	l=$(printf '%s\n' "${lex[@]}" | median)
	s=$(printf '%s\n' "${sem[@]}" | median)
	q=$(printf '%s\n' "${sql[@]}" | median)
	printf 'per process, median of 10: hybrid %.1f ms, lexical %.1f ms, semantic %.1f ms, sqlite3 %.1f ms; hybrid/sqlite3 %.2f\n' \
		"$h" "$l" "$s" "$q" "$(echo "$h $q" | awk '{print $1/$2}')"
}

# in_process: searchlat's p50 and p99 over the queries, per mode, the query
# embedded in each run.
in_process() {
	for mode in lexical semantic hybrid; do
		"$bin/searchlat" -r 30 -mode "$mode" .kbq "${queries[@]}" | awk -v m="$mode" '/^all/ {print "in process, " m ": " $0}'
	done
}

measure() {
	local scale=$1
	cd "$work"
	rm -rf "$work/repo" "$work/fts.db"
	corpus_repo "$work/repo" "$corpus" "$scale"
	cd "$work/repo"
	printf 'embeddings:\n  model: all-MiniLM-L6-v2\n' >.kb/config.yaml
	echo "== scale $scale: $(find .kb -name '*.md' | wc -l) files"
	# Vectors are copied by blob from the previous artifact, when there is
	# one: an earlier run's (ARTIFACT), or this run's first scale's.
	if [ -n "${ARTIFACT:-}" ]; then
		cp -r "$ARTIFACT" .kbq
	elif [ -d "$work/first" ]; then
		cp -r "$work/first" .kbq
	fi
	/usr/bin/time -f "%e s, peak RSS %M KiB" -o "$work/t" "$kbc" build --no-global --keep-going 2>&1 | tail -1
	echo "full build: $(cat "$work/t")"
	if [ "$scale" = 1 ]; then
		rm -rf "$work/first"
		cp -r .kbq "$work/first"
		# A one-file edit: a line appended to a long document re-embeds its
		# last chunk.
		local f=.kb/reference/7.5/Microsoft.PowerShell.Core/About/about_Scopes.md
		hyperfine -N -w 1 -r 10 --prepare "sh -c 'echo \"Edited at \$(date +%s%N).\" >> $f'" \
			"$kbc build --no-global --keep-going" 2>/dev/null | grep -E 'Time|Range' | sed 's/^/one-file edit: /'
	fi
	per_process
	in_process
	echo
}

for scale in ${scales//,/ }; do
	measure "$scale"
done
