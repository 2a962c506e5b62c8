# bench/lib.sh: shared by the bench scripts; source it.

# corpus_repo DIR CORPUS [SCALE]: a new git repository in DIR whose .kb/
# holds the extracted CORPUS, or SCALE copies of its reference/ directory
# under distinct paths, committed.
corpus_repo() {
	local dir=$1 corpus=$2 scale=${3:-1}
	mkdir -p "$dir/.kb"
	git -C "$dir" init -q -b main
	git -C "$dir" config user.email bench@example.com
	git -C "$dir" config user.name bench
	if [ "$scale" -eq 1 ]; then
		tar xzf "$corpus" -C "$dir/.kb"
	else
		local tmp
		tmp=$(mktemp -d)
		tar xzf "$corpus" -C "$tmp"
		for i in $(seq 1 "$scale"); do
			mkdir -p "$dir/.kb/copy$i"
			cp -r "$tmp/reference" "$dir/.kb/copy$i/"
		done
		rm -rf "$tmp"
	fi
	git -C "$dir" add -A
	git -C "$dir" commit -q -m corpus
}

# bench_setup [PKG...]: a temporary directory $work, removed on exit along
# with the server whose pid the script puts in $server_pid, and kbc and
# kbq (and the PKGs) built from $root into $work/bin, first on PATH.
bench_setup() {
	work=$(mktemp -d)
	server_pid=
	trap bench_cleanup EXIT
	(cd "$root" && go build -o "$work/bin/" ./cmd/kbc ./cmd/kbq "$@")
	export PATH="$work/bin:$PATH"
}

bench_cleanup() {
	if [ -n "$server_pid" ]; then
		kill "$server_pid" 2>/dev/null || true
		wait "$server_pid" 2>/dev/null || true
	fi
	rm -rf "$work"
}

# need CMD:PACKAGE...: installs with apt-get the packages of the commands
# that are not on PATH.
need() {
	local missing=()
	for p in "$@"; do command -v "${p%%:*}" >/dev/null 2>&1 || missing+=("${p#*:}"); done
	if [ ${#missing[@]} -gt 0 ]; then
		apt-get update -qq && apt-get install -y -qq "${missing[@]}" >/dev/null
	fi
}

# median: the median of the numbers on stdin, one a line.
median() { sort -g | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
