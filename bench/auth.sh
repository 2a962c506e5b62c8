#!/usr/bin/env bash
# bench/auth.sh: kbq serve --db with callers identified, over NAMES
# (default 20) repositories of the PowerShell docs, private, each a git
# repository published into one PostgreSQL database this script starts;
# group:bench is granted them all. Ten queries, 20 rounds each after one
# of warm-up (bench/httplat), three runs of each:
#   - no identification (loopback), for comparison;
#   - a static token (--tokens);
#   - an OIDC access token, a JWT of a local issuer (bench/idp) checked
#     by its discovery document and keys (--oidc-issuer);
#   - a GitHub token asked of a local stand-in of GitHub's API (bench/idp,
#     three pages of repositories) (--github-api): the first request of
#     three new tokens, then warm.
# Needs Go, git, PostgreSQL (postgresql-15), curl and the shared corpora;
# exits 0 without measuring when the corpora are not there.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/lib.sh"
ps=${SHARED:-$root/../shared}/corpora/powershell-docs.tar.gz
names=${NAMES:-20}
if [ ! -f "$ps" ]; then
	echo "bench: the shared corpora are not there; nothing to measure" >&2
	exit 0
fi
bench_setup ./bench/httplat ./bench/idp
pg_start
export KBQ_DATABASE_URL="$pg_server/postgres?sslmode=disable"
export XDG_CACHE_HOME=$work/cache KBQ_USAGE=off

echo "== $names private repositories of the PowerShell docs, published"
corpus_repo "$work/ps1" "$ps"
(cd "$work/ps1" && kbc build --rev HEAD --keep-going --no-global >/dev/null 2>&1)
repos=""
for i in $(seq 1 "$names"); do
	[ "$i" -gt 1 ] && cp -r "$work/ps1" "$work/ps$i"
	(cd "$work/ps$i" && kbc publish --repo "127.0.0.1/bench/ps$i" --keep-going >/dev/null 2>&1)
	repos+="${repos:+,}bench/ps$i"
done
kbc grant add group:bench '127.0.0.1/bench/*' 2>/dev/null
echo "  $(psql "$KBQ_DATABASE_URL" -tAc 'SELECT count(*) FROM kbq_document') documents, $(psql "$KBQ_DATABASE_URL" -tAc "SELECT count(*) FROM kbq_repo WHERE visibility = 'private'") private repositories"
psql "$KBQ_DATABASE_URL" -qc 'VACUUM (ANALYZE)' -c 'CHECKPOINT'

printf '%s\n' transcript "execution policy" "remote session credentials" "convert json to object" \
	"how to create a module manifest" "set an environment variable" retries pipeline \
	"get child items recursively" "start a background job and wait" >"$work/queries.txt"
echo "sha256:$(printf %s bench-token | sha256sum | cut -d' ' -f1) user:bench group:bench" >"$work/tokens"

idp_addr=127.0.0.1:$(free_port)
idp -addr "$idp_addr" -aud "http://127.0.0.1:7419/mcp" -groups bench -repos "$repos" >"$work/jwt" 2>/dev/null &
idp_pid=$!
trap 'kill $idp_pid 2>/dev/null || true; bench_cleanup' EXIT
for _ in $(seq 1 100); do [ -s "$work/jwt" ] && break; sleep 0.05; done
jwt=$(cat "$work/jwt")

serve() { # NAME AUTH ARGS...: three runs, first answer after start then p50 and p99 warm
	local name=$1 auth=$2 addr
	shift 2
	echo "  $name:"
	for run in 1 2 3; do
		addr=127.0.0.1:$(free_port)
		httplat -url "http://$addr" -q "$work/queries.txt" -rounds 20 -auth "$auth" \
			-start "exec kbq serve --db env --addr $addr --audit $work/audit.log $* 2>/dev/null" | sed "s/^/    run $run: /"
	done
}

echo
echo "== kbq serve --db, ten queries over every repository (200 searches a run)"
serve "nobody identified (loopback)" ""
serve "a static token" "Bearer bench-token" --tokens "$work/tokens"
serve "an OIDC access token (JWT)" "Bearer $jwt" --oidc-issuer "http://$idp_addr" --oidc-audience "http://127.0.0.1:7419/mcp"
echo "  a GitHub token:"
for run in 1 2 3; do
	addr=127.0.0.1:$(free_port)
	kbq serve --db env --addr "$addr" --audit "$work/audit.log" --github-api "http://$idp_addr" 2>/dev/null &
	pid=$!
	until curl -fs "http://$addr/healthz" >/dev/null 2>&1; do sleep 0.05; done
	# The server has fetched every repository: a search as the
	# unidentified would, without the token, is refused.
	firsts=""
	for k in 1 2 3; do
		t=$(curl -s -o /dev/null -w '%{time_total}' -H "Authorization: Bearer ghp_run${run}tok$k" "http://$addr/search?n=10&q=transcript")
		firsts+="${firsts:+, }$(awk -v t="$t" 'BEGIN {printf "%.1f ms", t*1000}')"
	done
	echo "    run $run: first request of three new tokens: $firsts"
	httplat -url "http://$addr" -q "$work/queries.txt" -rounds 20 -auth "Bearer ghp_run${run}tok1" | sed "s/^/    run $run: warm, /"
	kill "$pid"; wait "$pid" 2>/dev/null || true
done
echo
echo "  audit log: $(wc -l <"$work/audit.log") lines, the last: $(tail -1 "$work/audit.log")"
