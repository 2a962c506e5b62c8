#!/usr/bin/env bash
# bench/pgo.sh: writes cmd/kbc/default.pgo and cmd/kbq/default.pgo, the CPU
# profile that `go build` uses to optimise the two binaries (profile-guided
# optimisation: hot calls inlined, hot interface calls devirtualised). Both
# files hold the same profile, of builds and searches together, so that the
# packages the two binaries share are compiled once, not once for each.
#
#   bench/pgo.sh               profile and write both files
#   bench/pgo.sh -n            profile, and only say what it would write
#
# The profiles come from the Hugo documentation corpus
# (../shared/corpora/hugo-docs.tar.gz), never from the PowerShell corpus the
# speed benchmarks measure, so that what the benchmarks report is not
# trained on their own queries:
#
#   kbc   ten full builds of the corpus
#   kbq   the queries below in one process (bench/searchlat), lexical; and
#         hybrid too when all-MiniLM-L6-v2 is in $KBQ_MODELS (else kbq/models
#         in the user cache directory), over a build of the corpus with embeddings
#         (about three minutes on a 2-core machine)
#
# Run it again when the hot code changes shape (a profile whose functions
# have moved still builds, but guides less). Needs Go and git. Exits 0
# without profiling when the corpus is not there.
set -euo pipefail

dry=
while getopts "n" opt; do
	case $opt in
	n) dry=1 ;;
	*) echo "usage: $0 [-n]" >&2; exit 2 ;;
	esac
done

root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/lib.sh"
shared=${SHARED:-$root/../shared}
corpus=$shared/corpora/hugo-docs.tar.gz
if [ ! -f "$corpus" ]; then
	echo "bench: $corpus not found; nothing to profile" >&2
	exit 0
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bin=$work/bin
# Without a profile, so that one run's result does not shape the next's.
(cd "$root" && CGO_ENABLED=0 go build -pgo=off -trimpath -o "$bin/" ./cmd/kbc ./cmd/kbq ./bench/searchlat)

corpus_repo "$work/repo" "$corpus"
cd "$work/repo"

echo "kbc: ten full builds" >&2
for i in $(seq 1 10); do
	rm -rf .kbq
	KBC_CPUPROFILE="$work/build$i.prof" "$bin/kbc" build --no-global --keep-going >/dev/null 2>&1
done

queries=(
	"configure the base url"
	"shortcode parameters"
	"taxonomy templates"
	"render hook for images"
	"how do I add a menu"
	"page bundles and resources"
	"deploy to github pages"
	"syntax highlighting"
	"multilingual site"
	"front matter dates"
	"partial template cache"
	"image processing resize"
)
echo "kbq: ${#queries[@]} queries in one process, lexical" >&2
"$bin/searchlat" -mode lexical -r 200 -cpuprofile "$work/search-lexical.prof" .kbq "${queries[@]}" >/dev/null

models=${KBQ_MODELS:-${XDG_CACHE_HOME:-$HOME/.cache}/kbq/models}
if [ -f "$models/all-MiniLM-L6-v2/config.json" ]; then
	echo "kbq: the same queries, hybrid, after a build with embeddings" >&2
	printf 'embeddings:\n  model: all-MiniLM-L6-v2\n' >.kb/config.yaml
	git add -A && git commit -q -m embeddings
	"$bin/kbc" build --no-global --keep-going >/dev/null 2>&1
	"$bin/searchlat" -mode hybrid -r 100 -cpuprofile "$work/search-hybrid.prof" .kbq "${queries[@]}" >/dev/null
else
	echo "kbq: all-MiniLM-L6-v2 is not in $models; the profile leaves hybrid search out" >&2
fi

merge() { (cd "$root" && go tool pprof -proto "$@" 2>/dev/null); }
if [ -n "$dry" ]; then
	echo "would write cmd/kbc/default.pgo and cmd/kbq/default.pgo from $(ls "$work"/*.prof | wc -l) profiles" >&2
	exit 0
fi
merge "$work"/*.prof >"$work/default.pgo"
cp "$work/default.pgo" "$root/cmd/kbc/default.pgo"
cp "$work/default.pgo" "$root/cmd/kbq/default.pgo"
ls -l "$root/cmd/kbc/default.pgo" "$root/cmd/kbq/default.pgo" >&2
