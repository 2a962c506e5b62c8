#!/usr/bin/env bash
# bench/pg.sh: many repositories in one PostgreSQL database.
#
# The PowerShell docs under NAMES names (default 20) and the Hugo docs,
# each its own git repository, published with kbc publish into one
# database of a PostgreSQL server this script starts (initdb and pg_ctl, as
# the postgres user when run as root). It prints:
#   - each publish beside the repository's local kbc build --rev HEAD;
#   - republishing an unchanged commit, and a one-file change;
#   - kbq serve over HTTP, ten queries across every repository (bench/httplat:
#     p50 and p99 warm, and the first answer after start), from the database
#     (--db), from the local artifacts of every repository (--index, each),
#     and from one repository's local artifact;
#   - the database's size beside the artifacts'.
# Needs Go, git, PostgreSQL (postgresql-15) and the shared corpora; exits 0
# without measuring when the corpora are not there.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/lib.sh"
shared=${SHARED:-$root/../shared}
ps=$shared/corpora/powershell-docs.tar.gz
hugo=$shared/corpora/hugo-docs.tar.gz
names=${NAMES:-20}
if [ ! -f "$ps" ] || [ ! -f "$hugo" ]; then
	echo "bench: the shared corpora are not there; nothing to measure" >&2
	exit 0
fi
bench_setup ./bench/httplat
pg_start
export KBQ_DATABASE_URL="$pg_server/postgres?sslmode=disable"
export XDG_CACHE_HOME=$work/cache KBQ_USAGE=off

secs() { awk -v s="$1" -v e="$2" 'BEGIN {printf "%.2f", e-s}'; }
now() { date +%s.%N; }

echo "== $names PowerShell repositories and the Hugo docs, published"
mkdir "$work/repos"
corpus_repo "$work/repos/ps1" "$ps"
corpus_repo "$work/repos/hugo" "$hugo"
repos=(hugo ps1)
for i in $(seq 2 "$names"); do
	cp -r "$work/repos/ps1" "$work/repos/ps$i"
	repos+=("ps$i")
done
# The copies are 700 MB the kernel has yet to write: written out first,
# they do not hold up the publishes' write-ahead log flushes.
sync
builds=() pubs=()
for r in "${repos[@]}"; do
	cd "$work/repos/$r"
	t0=$(now)
	kbc build --rev HEAD --keep-going --no-global >/dev/null 2>&1
	t1=$(now)
	kbc publish --repo "bench/$r" --keep-going >/dev/null 2>"$work/pub.err" || { cat "$work/pub.err"; exit 1; }
	t2=$(now)
	builds+=("$(secs "$t0" "$t1")") pubs+=("$(secs "$t1" "$t2")")
	printf '  %-6s build %5ss  publish %5ss  %4sx  (%s)\n' "$r" "$(secs "$t0" "$t1")" "$(secs "$t1" "$t2")" \
		"$(awk -v b="$(secs "$t0" "$t1")" -v p="$(secs "$t1" "$t2")" 'BEGIN {printf "%.2f", p/b}')" \
		"$(sed -n 's/.*: \([0-9]* added.*\) in .*/\1/p' "$work/pub.err")"
done
ratio_summary() { # LABEL FIRST LAST: min, median and max of publish / build over repos[FIRST..LAST]
	local ratios
	ratios=$(for i in $(seq "$2" "$3"); do awk -v b="${builds[$i]}" -v p="${pubs[$i]}" 'BEGIN {printf "%.2f\n", p/b}'; done | sort -n)
	echo "  publish / build, $1: min $(echo "$ratios" | head -1)x, median $(echo "$ratios" | median)x, max $(echo "$ratios" | tail -1)x"
}
ratio_summary "every repository" 0 $((${#repos[@]} - 1))
# hugo and ps1 bring text the database does not hold; the copies after
# them hold the text of ps1.
[ "${#repos[@]}" -gt 2 ] && ratio_summary "the copies of ps1 (text the database holds)" 2 $((${#repos[@]} - 1))
docs=$(psql "$KBQ_DATABASE_URL" -tAc 'SELECT count(*) FROM kbq_document')
echo "  $docs documents in the database"

echo
echo "== republish and a one-file change (bench/ps1), three runs each"
cd "$work/repos/ps1"
for i in 1 2 3; do
	t0=$(now); kbc publish --repo bench/ps1 --keep-going >/dev/null 2>&1; t1=$(now)
	echo "  republish unchanged: $(secs "$t0" "$t1")s"
done
target=$(find .kb -name '*.md' | sort | sed -n 1p)
for i in 1 2 3; do
	echo "edit $i" >>"$target"
	git commit -q -am "edit $i"
	t0=$(now)
	kbc build --rev HEAD --keep-going --no-global >/dev/null 2>&1
	kbc publish --repo bench/ps1 --keep-going >/dev/null 2>"$work/pub.err"
	t1=$(now)
	echo "  one-file change, build and publish: $(secs "$t0" "$t1")s ($(sed -n 's/.*: \([0-9]* added.*\) in .*/\1/p' "$work/pub.err"))"
done

cat >"$work/queries.txt" <<'QUERIES'
transcript
execution policy
remote session credentials
convert json to object
how to create a module manifest
set an environment variable for the current session
retries
pipeline
shortcode
configure the base url
QUERIES

serve() { # NAME ARGS...: first answer after start, then p50 and p99 warm
	local name=$1 addr
	addr=127.0.0.1:$(free_port)
	shift
	echo "  $name:"
	httplat -url "http://$addr" -q "$work/queries.txt" -rounds 20 -start "exec kbq serve --addr $addr $* 2>/dev/null" | sed 's/^/    /'
}

# Reads are measured on a settled server: what the publishes left to
# autovacuum and the checkpointer is done first, and written out.
psql "$KBQ_DATABASE_URL" -qc 'VACUUM (ANALYZE)' -c 'CHECKPOINT'
sync

echo
echo "== kbq serve, ten queries across every repository (first answer after start; then 200 searches)"
for i in 1 2 3 4 5; do
	rm -rf "$XDG_CACHE_HOME"
	serve "--db, empty cache ($i of 5)" --db env
done
serve "--db, files cached" --db env
indexes=""
for r in "${repos[@]}"; do indexes="$indexes --index bench/$r=$work/repos/$r/.kbq"; done
serve "--index, each repository's local artifact" $indexes
serve "one repository's local artifact (bench/ps1)" --index "$work/repos/ps1/.kbq"

echo
echo "== size"
db=$(psql "$KBQ_DATABASE_URL" -tAc 'SELECT pg_database_size(current_database())')
art=0
for r in "${repos[@]}"; do art=$((art + $(du -sb "$work/repos/$r/.kbq" --exclude=published | cut -f1))); done
files=$(psql "$KBQ_DATABASE_URL" -tAc 'SELECT coalesce(sum(size), 0) FROM kbq_file')
echo "  database $((db / 1048576)) MiB (artifact files stored once by content: $((files / 1048576)) MiB); the ${#repos[@]} local artifacts $((art / 1048576)) MiB"
