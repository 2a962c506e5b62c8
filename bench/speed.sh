#!/usr/bin/env bash
# bench/speed.sh: kbc and kbq against SQLite FTS5 and ripgrep, in one run, on
# the PowerShell-Docs corpus (../shared/corpora/powershell-docs.tar.gz)
# extracted into a temporary git repository.
#
#   bench/speed.sh            the corpus as it is (3,088 files, 32 MiB), then
#                             replicated 30 times under distinct paths
#   bench/speed.sh -x 10      replicated ten times only
#   bench/speed.sh -x 1,10    both, one after the other, in one run
#   bench/speed.sh -r 9       nine runs of each build (default 5)
#
# It prints medians and the ratio of kbq to each peer, the start of kbq
# (just linked, and copied as an install would) beside a Go hello-world,
# and the latency of the same queries inside one
# process (bench/searchlat: p50 and p99), with hostile queries beside them;
# then, for each target missed, where the time goes (a CPU profile's top
# functions, or package initialisation). Needs Go and git;
# installs sqlite3, hyperfine and ripgrep with apt-get when missing. Exits 0
# without measuring when the corpus is not there.
set -euo pipefail

scales=1,30
runs=5
while getopts "x:r:" opt; do
	case $opt in
	x) scales=$OPTARG ;;
	r) runs=$OPTARG ;;
	*) echo "usage: $0 [-x SCALE] [-r RUNS]" >&2; exit 2 ;;
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

need sqlite3:sqlite3 hyperfine:hyperfine rg:ripgrep /usr/bin/time:time

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bin=$work/bin
# As the README builds them: static (CGO_ENABLED=0).
(cd "$root" && CGO_ENABLED=0 go build -trimpath -ldflags=-s -o "$bin/" ./cmd/kbc ./cmd/kbq ./bench/searchlat)
kbc=$bin/kbc
kbq=$bin/kbq
# A Go hello-world, built the same way: the floor for starting kbq.
mkdir "$work/hello"
printf 'package main\n\nimport "fmt"\n\nfunc main() { fmt.Println("hello") }\n' >"$work/hello/main.go"
printf 'module hello\n' >"$work/hello/go.mod"
(cd "$work/hello" && CGO_ENABLED=0 go build -trimpath -ldflags=-s -o "$bin/hello" .)

# measure SCALE: one table for the corpus replicated SCALE times.
measure() {
	local scale=$1
	cd "$work"
	rm -rf "$work/repo" "$work/fts.db"
	repo=$work/repo
	corpus_repo "$repo" "$corpus" "$scale"
	cd "$repo"
	files=$(find .kb -name '*.md' | wc -l)
	bytes=$(du -sb .kb | cut -f1)

	ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a/b}'; }
	# timed FILE CMD...: runs CMD under /usr/bin/time, whose peak RSS it
	# keeps, and writes "seconds RSS" to FILE with the seconds from the
	# shell's microsecond clock: time's own are in hundredths, ±2% of a
	# half-second build, the size of the differences measured.
	timed() {
		local out=$1 t0 t1 s m
		shift
		t0=${EPOCHREALTIME/./}
		/usr/bin/time -f "%e %M" -o "$out" "$@"
		t1=${EPOCHREALTIME/./}
		read -r s m <"$out"
		awk -v a="$t0" -v b="$t1" -v m="$m" 'BEGIN {printf "%.3f %s\n", (b - a) / 1e6, m}' >"$out"
	}

	echo "corpus: $files files, $((bytes / 1048576)) MiB (x$scale); $(nproc) CPUs; $runs runs"
	echo

	# Full builds, and the same files loaded into SQLite FTS5 by the sqlite3 CLI.
	kbc_times=() kbc_rss=() sql_times=()
	for _ in $(seq 1 "$runs"); do
		rm -rf .kbq
		timed "$work/t" "$kbc" build --no-global --keep-going >/dev/null 2>"$work/build.err"
		read -r t m <"$work/t"
		kbc_times+=("$t") kbc_rss+=("$m")
		rm -f "$work/fts.db"
		timed "$work/t" sqlite3 "$work/fts.db" \
			"CREATE VIRTUAL TABLE docs USING fts5(path, body, tokenize='porter unicode61');
			 INSERT INTO docs(path, body) SELECT name, CAST(data AS TEXT) FROM fsdir('.kb') WHERE name LIKE '%.md';"
		read -r t m <"$work/t"
		sql_times+=("$t")
	done
	# Each kbc build runs right before its SQLite load: the median of
	# the pairs' ratios holds better than a ratio of medians when the
	# machine's speed drifts during the run.
	pair_ratios=()
	for i in "${!kbc_times[@]}"; do
		pair_ratios+=("$(ratio "${kbc_times[$i]}" "${sql_times[$i]}")")
	done
	build_ratio=$(printf '%s\n' "${pair_ratios[@]}" | median)
	kbc_build=$(printf '%s\n' "${kbc_times[@]}" | median)
	kbc_peak=$(printf '%s\n' "${kbc_rss[@]}" | sort -n | tail -1)
	sql_build=$(printf '%s\n' "${sql_times[@]}" | median)
	tail -1 "$work/build.err"

	# Incremental builds: one file changes, is committed, and kbc builds again.
	target=$(git ls-files .kb | awk '/Start-Transcript\.md$/ && !t {t = $0} END {print t}')
	inc_times=()
	for i in $(seq 1 "$runs"); do
		echo "edit $i" >>"$target"
		git commit -q -am "edit $i"
		timed "$work/t" "$kbc" build --no-global --keep-going >/dev/null 2>&1
		read -r t m <"$work/t"
		inc_times+=("$t")
	done
	kbc_inc=$(printf '%s\n' "${inc_times[@]}" | median)

	# kbc check --staged with one staged file, as the pre-commit hook runs it.
	echo "staged edit" >>"$target"
	git add "$target"
	hyperfine -N -w 3 -r 20 --export-csv "$work/check.csv" -n check "$kbc check --staged --no-global" >/dev/null
	check_ms=$(awk -F, 'NR==2 {printf "%.1f", $4*1000}' "$work/check.csv")
	# The installed pre-commit hook itself, as git runs it.
	PATH="$bin:$PATH" "$kbc" hooks install >/dev/null 2>&1
	PATH="$bin:$PATH" hyperfine -N -w 3 -r 20 --export-csv "$work/hook.csv" -n hook ".git/hooks/pre-commit" >/dev/null
	hook_ms=$(awk -F, 'NR==2 {printf "%.1f", $4*1000}' "$work/hook.csv")
	git reset -q --hard

	# Queries: whole processes, warm page cache, kbq vs sqlite3 (the same terms
	# ORed, BM25 rank, top 5 with snippets) vs ripgrep (files matching any term).
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
	"$kbc" build --no-global --keep-going >/dev/null 2>&1
	kbq_q=() sql_q=() rg_q=()
	for q in "${queries[@]}"; do
		fts=$(echo "$q" | awk '{for (i=1;i<=NF;i++) printf "%s%s", (i>1?" OR ":""), $i}')
		rgargs=$(echo "$q" | awk '{for (i=1;i<=NF;i++) printf " -e %s", $i}')
		hyperfine -N -w 3 -r 30 --export-csv "$work/q.csv" -n kbq -n sqlite3 -n rg \
			"$kbq search $q" \
			"sqlite3 $work/fts.db \"SELECT path, snippet(docs, 1, '[', ']', '…', 20) FROM docs WHERE docs MATCH '$fts' ORDER BY rank LIMIT 5\"" \
			"rg -i -l$rgargs .kb" >/dev/null 2>&1
		kbq_q+=("$(awk -F, 'NR==2 {print $4*1000}' "$work/q.csv")")
		sql_q+=("$(awk -F, 'NR==3 {print $4*1000}' "$work/q.csv")")
		rg_q+=("$(awk -F, 'NR==4 {print $4*1000}' "$work/q.csv")")
		printf '  %-55s kbq %6.1f ms  sqlite3 %6.1f ms  rg %7.1f ms\n' "\"$q\"" "${kbq_q[-1]}" "${sql_q[-1]}" "${rg_q[-1]}"
	done
	# The same queries inside one process, as kbq serve and kbq mcp run
	# them, then hostile ones: a stop word, a prefix of thousands of terms,
	# 200 OR-ed terms, a pasted 10 KB text.
	"$bin/searchlat" -r 50 .kbq "${queries[@]}" >"$work/lat.txt"
	inproc=$(awk '/^all/ {print $5, $7}' "$work/lat.txt" | tr -d ';')
	"$bin/searchlat" -r 5 .kbq "the" "a*" "@or:200" "@1200:powershell" | sed -n 's/^  /  hostile /p'
	# Starting the process: kbq --version beside the hello-world, and
	# beside a copy of kbq. A binary is mapped in the pieces the page cache
	# holds it in: go build writes it through a mapping, and the binary
	# just linked, which the searches above run, starts later than the
	# same bytes copied into place as an install would (docs/benchmarks.md,
	# "the page cache's pieces").
	cp "$kbq" "$bin/kbq-copied"
	hyperfine -N -w 10 -r 100 --export-csv "$work/start.csv" -n kbq -n hello -n copied \
		"$kbq --version" "$bin/hello" "$bin/kbq-copied --version" >/dev/null 2>&1
	read -r start start_sd hello hello_sd copied < <(awk -F, 'NR==2 {k=$2*1000; ks=$3*1000} NR==3 {h=$2*1000; hs=$3*1000}
		NR==4 {c=$2*1000} END {printf "%.1f %.1f %.1f %.1f %.1f\n", k, ks, h, hs, c}' "$work/start.csv")
	kbq_med=$(printf '%s\n' "${kbq_q[@]}" | median)
	sql_med=$(printf '%s\n' "${sql_q[@]}" | median)
	rg_med=$(printf '%s\n' "${rg_q[@]}" | median)

	size=$(du -sm .kbq | cut -f1)
	echo
	printf '%-34s %10s %12s %8s\n' "measure" "kbq" "peer" "ratio"
	printf '%-34s %9ss %11ss %8s\n' "full build (sqlite3 FTS5 load)" "$kbc_build" "$sql_build" "$build_ratio"
	printf '%-34s %s\n' "  ratio of each run" "${pair_ratios[*]}"
	printf '%-34s %9ss %11ss %8s\n' "incremental build, 1 file changed" "$kbc_inc" "$sql_build" "$(ratio "$kbc_inc" "$sql_build")"
	printf '%-34s %8sMB %12s\n' "build peak RSS" "$((kbc_peak / 1024))" ""
	printf '%-34s %8sms %12s\n' "kbc check --staged, 1 file" "$check_ms" ""
	printf '%-34s %8sms %12s\n' "pre-commit hook, 1 file" "$hook_ms" ""
	printf '%-34s %8.1fms %10.1fms %8s\n' "start, kbq --version (hello-world)" "$start" "$hello" "$(ratio "$start" "$hello")"
	printf '%-34s %s\n' "  mean ± σ" "kbq $start ± $start_sd ms, hello-world $hello ± $hello_sd ms"
	printf '%-34s %8.1fms %10.1fms %8s\n' "  kbq copied, as installed" "$copied" "$hello" "$(ratio "$copied" "$hello")"
	printf '%-34s %8.1fms %10.1fms %8s\n' "search, median of 10 (sqlite3)" "$kbq_med" "$sql_med" "$(ratio "$kbq_med" "$sql_med")"
	printf '%-34s %8.1fms %10.1fms %8s\n' "search, median of 10 (ripgrep)" "$kbq_med" "$rg_med" "$(ratio "$kbq_med" "$rg_med")"
	read -r p50 p99 <<<"$inproc"
	printf '%-34s %10s %12s\n' "in process, p50 / p99 of 10" "$p50" "$p99"
	printf '%-34s %8sMB\n' "artifact size" "$size"
	echo "kbq binary: $(($(stat -c %s "$kbq") / 1024)) KiB stripped"
	where_time_goes
}

# where_time_goes profiles what missed its target in the table above.
where_time_goes() {
	over() { awk -v a="$1" -v b="$2" 'BEGIN {exit !(a > b)}'; }
	top() { go tool pprof -top -nodecount=15 "$1" 2>/dev/null | sed -n '/flat%/,$p' | sed 's/^/  /'; }
	if over "$build_ratio" 2.0; then
		echo
		echo "full build is over 2.0x sqlite3's load; its CPU profile (KBC_CPUPROFILE), by own time:"
		rm -rf .kbq
		KBC_CPUPROFILE="$work/build.prof" "$kbc" build --no-global --keep-going >/dev/null 2>&1
		top "$work/build.prof"
	fi
	if over "${p50%ms}" 2 || over "${p99%ms}" 10; then
		echo
		echo "in process, p50 over 2 ms or p99 over 10 ms; the ten queries' CPU profile, by own time:"
		"$bin/searchlat" -r 20 -cpuprofile "$work/search.prof" .kbq "${queries[@]}" >/dev/null
		top "$work/search.prof"
	fi
	if over "$(ratio "$start" "$hello")" 1.5; then
		echo
		echo "starting kbq is over 1.5x a Go hello-world; package initialisation (GODEBUG=inittrace=1), by clock:"
		for _ in $(seq 20); do GODEBUG=inittrace=1 "$kbq" --version 2>&1 >/dev/null; done |
			awk '/^init / {t[$2] += $5; n++} END {for (p in t) printf "  %6.3f ms  %s\n", t[p] / 20, p}' | sort -rn | head -15
	fi
	if over "$kbq_med" "$sql_med"; then
		echo
		echo "per-process search is over sqlite3's: of kbq's $(printf '%.1f' "$kbq_med") ms, starting the process (kbq --version) takes" \
			"$start ms and the search itself ${p50} (in process p50); the rest is opening the artifact, output and recording use"
	fi
}

for scale in ${scales//,/ }; do
	measure "$scale"
	echo
done
