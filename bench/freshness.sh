#!/usr/bin/env bash
# bench/freshness.sh: what kbq's check of an artifact built from the working
# tree (is any knowledge file newer than the artifact?) adds to a search.
# Each pair runs the same kbq search with the check (the artifact found in
# the repository) and without it (a copy of the artifact named by
# KBQ_INDEX: only a repository's own .kbq/ is checked), both through env so
# that they start alike, on PowerShell-Docs subsets below the
# file limit (every file compared) and above it (directories only).
# Needs hyperfine and ../shared/corpora.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/lib.sh"
corpus=$root/../shared/corpora/powershell-docs.tar.gz
[ -f "$corpus" ] || { echo "freshness: $corpus is absent" >&2; exit 0; }
command -v hyperfine >/dev/null || { echo "freshness: needs hyperfine" >&2; exit 1; }
bench_setup
tar xzf "$corpus" -C "$work"
ref=$work/reference
make_repo() { # make_repo NAME DIR...: a repository whose .kb/ holds the DIRs
	local repo=$work/$1
	shift
	mkdir -p "$repo/.kb"
	for d in "$@"; do cp -r "$d" "$repo/.kb/"; done
	git -C "$repo" init -q -b main
	git -C "$repo" add -A
	git -C "$repo" -c user.name=b -c user.email=b@example.com commit -q -m corpus
	(cd "$repo" && kbc build --no-global --keep-going 2>&1 | tail -1)
}
make_repo small "$ref/7.5/Microsoft.PowerShell.Utility" "$ref/7.5/Microsoft.PowerShell.Management"
make_repo medium "$ref/7.5" "$ref/7.7" "$ref/docs-conceptual"
corpus_repo "$work/large" "$corpus" 4 >/dev/null
(cd "$work/large" && kbc build --no-global --keep-going 2>&1 | tail -1)
for name in small medium large; do
	repo=$work/$name
	echo "== $name: $(head -1 "$repo/.kbq/worktree.stamps" | cut -d' ' -f4) knowledge files"
	cp -r "$repo/.kbq" "$work/$name.kbq"
	cd "$repo/.kb"
	hyperfine -N -w 5 -r 60 -n checked "env KBQ_INDEX= kbq search pipeline variable scope" \
		-n unchecked "env KBQ_INDEX=$work/$name.kbq kbq search pipeline variable scope" 2>&1 |
		grep -E 'Benchmark|Time|Range|±'
done
