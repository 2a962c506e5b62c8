#!/usr/bin/env bash
# bench/pgpair.sh OLD NEW [ROUNDS]: two kbc binaries publishing the
# PowerShell docs, alternating, ROUNDS (default 6) each. Every round makes
# a fresh database and publishes the docs twice, as two repositories: the
# first publish brings text the database does not hold, the second text
# it does (as for the copies of bench/pg.sh). Prints each round's times
# and write-ahead log, the medians, and the database's size after a
# round. Build the binaries from two commits, e.g.
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
publish() { # KBC REPO: "MS WAL_MiB" of one publish
	local lsn s e
	lsn=$(psql "$KBQ_DATABASE_URL" -tAc 'SELECT pg_current_wal_lsn()')
	s=$(date +%s%N)
	"$1" publish --repo "$2" --keep-going >/dev/null 2>&1
	e=$(date +%s%N)
	echo "$(ms "$s" "$e") $(psql "$KBQ_DATABASE_URL" -tAc "SELECT round(pg_wal_lsn_diff(pg_current_wal_lsn(), '$lsn') / 1048576)")"
}
run() { # KBC: "first_ms first_wal second_ms second_wal db_MiB"
	local db=r$RANDOM$RANDOM first second size
	psql "$server/postgres" -qc "CREATE DATABASE $db"
	export KBQ_DATABASE_URL="$server/$db?sslmode=disable"
	first=$(publish "$1" bench/first)
	sleep 1
	second=$(publish "$1" bench/second)
	size=$(psql "$KBQ_DATABASE_URL" -tAc 'SELECT pg_database_size(current_database()) / 1048576')
	psql "$server/postgres" -qc "DROP DATABASE $db"
	echo "$first $second $size"
}
a=() b=()
for i in $(seq 1 "$rounds"); do
	a+=("$(run "$old")") b+=("$(run "$new")")
	read -r af aw as asw adb <<<"${a[-1]}"
	read -r bf bw bs bsw bdb <<<"${b[-1]}"
	echo "  round $i: old first $af ms ($aw MiB WAL), second $as ms ($asw MiB), $adb MiB; new first $bf ms ($bw MiB), second $bs ms ($bsw MiB), $bdb MiB"
done
col() { printf '%s\n' "${@:2}" | awk -v c="$1" '{print $c}' | median; }
echo "median first publish: old $(col 1 "${a[@]}") ms, new $(col 1 "${b[@]}") ms"
echo "median second publish: old $(col 3 "${a[@]}") ms, new $(col 3 "${b[@]}") ms"
