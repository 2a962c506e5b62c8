#!/usr/bin/env bash
# bench/pgpair.sh OLD NEW [ROUNDS]: two kbc binaries publishing the
# PowerShell docs, alternating, ROUNDS (default 6) each. Every round makes
# a fresh database, publishes the docs once as another repository, then
# times the publish measured (so the files are stored already and the
# tables hold rows, as for all but a database's first repository). Prints
# each pair and both medians. Build the binaries from two commits, e.g.
#
#   git worktree add /tmp/old HEAD~1 && (cd /tmp/old && go build -o /tmp/old/kbc ./cmd/kbc)
#   go build -o /tmp/new/kbc ./cmd/kbc && bench/pgpair.sh /tmp/old/kbc /tmp/new/kbc 12
#
# Needs Go, git, PostgreSQL and the shared corpora.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/lib.sh"
old=$(realpath "$1") new=$(realpath "$2") rounds=${3:-6}
ps=${SHARED:-$root/../shared}/corpora/powershell-docs.tar.gz
if [ ! -f "$ps" ]; then
	echo "bench: the shared corpora are not there; nothing to measure" >&2
	exit 0
fi
bench_setup
pg_start
export KBQ_USAGE=off
server=$pg_server

corpus_repo "$work/ps" "$ps"
cd "$work/ps"
kbc build --rev HEAD --keep-going --no-global >/dev/null 2>&1
ms() { echo $(( ($2 - $1) / 1000000 )); }
run() { # KBC: ms of the measured publish
	local db=r$RANDOM$RANDOM s e
	psql "$server/postgres" -qc "CREATE DATABASE $db"
	export KBQ_DATABASE_URL="$server/$db?sslmode=disable"
	"$1" publish --repo bench/other --keep-going >/dev/null 2>&1
	sleep 1
	s=$(date +%s%N)
	"$1" publish --repo bench/measured --keep-going >/dev/null 2>&1
	e=$(date +%s%N)
	psql "$server/postgres" -qc "DROP DATABASE $db"
	ms "$s" "$e"
}
a=() b=()
for i in $(seq 1 "$rounds"); do
	a+=("$(run "$old")") b+=("$(run "$new")")
	echo "  round $i: old ${a[-1]} ms, new ${b[-1]} ms"
done
echo "median: old $(printf '%s\n' "${a[@]}" | median) ms, new $(printf '%s\n' "${b[@]}" | median) ms"
