#!/usr/bin/env bash
# bench/cliv3.sh: what urfave/cli v3 would cost kbq and kbc per start.
#
# It copies the repository at HEAD twice into a temporary directory, and
# in one copy routes every command line through urfave/cli v3 (v3.14.0)
# before kbq's own command layer (internal/cli) runs it: a tree of the
# same commands and flags, with their help texts, is built and parses the
# arguments; v3 answers --version itself (bench/cliv3/mirror.go.txt). It
# then times, with hyperfine, both builds of kbq and kbc on --version and
# kbq on a one-word search, and prints the difference per start. Needs Go,
# git and hyperfine (installed with apt-get when missing).
set -euo pipefail
runs=${RUNS:-300}
repo=$(git -C "$(dirname "$0")/.." rev-parse --show-toplevel)
command -v hyperfine >/dev/null || { apt-get update -qq && apt-get install -y -qq hyperfine >/dev/null; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for v in own v3; do
	mkdir "$tmp/$v"
	git -C "$repo" archive HEAD | tar -x -C "$tmp/$v"
done
(
	cd "$tmp/v3"
	cp bench/cliv3/mirror.go.txt internal/cli/mirror.go
	go get -d github.com/urfave/cli/v3@v3.14.0 >/dev/null 2>&1
	# Run asks v3 first.
	perl -0pi -e 's/(func Run\(root \*Command, args \[\]string, s \*Streams, exitCode func\(error\) \(int, bool\)\) int \{\n)/$1\tif code, ok := runV3(root, args, s); ok {\n\t\treturn code\n\t}\n/' internal/cli/cli.go
	grep -q runV3 internal/cli/cli.go
)
for v in own v3; do
	(cd "$tmp/$v" && go build -o "$tmp/bin-$v/kbq" ./cmd/kbq && go build -o "$tmp/bin-$v/kbc" ./cmd/kbc)
done
"$tmp/bin-v3/kbq" --version
"$tmp/bin-own/kbc" -C "$repo" build -o "$tmp/idx" >/dev/null 2>&1
"$tmp/bin-v3/kbq" search --index "$tmp/idx" -l deploy >/dev/null
hyperfine -N -w 20 -r "$runs" --export-json "$tmp/h.json" \
	-n "kbq --version, own" "$tmp/bin-own/kbq --version" -n "kbq --version, v3" "$tmp/bin-v3/kbq --version" \
	-n "kbc --version, own" "$tmp/bin-own/kbc --version" -n "kbc --version, v3" "$tmp/bin-v3/kbc --version" \
	-n "kbq search, own" "$tmp/bin-own/kbq search --index $tmp/idx -l deploy" \
	-n "kbq search, v3" "$tmp/bin-v3/kbq search --index $tmp/idx -l deploy"
python3 - "$tmp/h.json" <<'PY'
import json, sys
r = {x["command"]: x for x in json.load(open(sys.argv[1]))["results"]}
print()
for what in ("kbq --version", "kbc --version", "kbq search"):
    own, v3 = r[what + ", own"], r[what + ", v3"]
    print(f"{what:15} own {own['mean']*1e3:.2f} ± {own['stddev']*1e3:.2f} ms, v3 {v3['mean']*1e3:.2f} ± {v3['stddev']*1e3:.2f} ms: "
          f"+{(v3['mean']-own['mean'])*1e3:.2f} ms mean, +{(v3['median']-own['median'])*1e3:.2f} ms median")
PY
