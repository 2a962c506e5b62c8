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
	(cd "$root" && CGO_ENABLED=0 go build -o "$work/bin/" ./cmd/kbc ./cmd/kbq "$@")
	export PATH="$work/bin:$PATH"
}

bench_cleanup() {
	if [ -n "$server_pid" ]; then
		kill "$server_pid" 2>/dev/null || true
		wait "$server_pid" 2>/dev/null || true
	fi
	if [ -n "${pg_ctl:-}" ]; then
		"${pg_as[@]}" "$pg_ctl" -D "$work/pg/data" -m immediate stop >/dev/null 2>&1 || true
	fi
	rm -rf "$work"
}

# pg_start: a PostgreSQL server of the script's own in $work/pg, started
# with initdb and pg_ctl (as the postgres user when run as root;
# postgresql-15 installed where there is none) and stopped on exit.
# $pg_server is its URL without a database: postgres://kbq@127.0.0.1:PORT.
# Call after bench_setup.
pg_start() {
	local bin port
	bin=$(dirname "$(ls /usr/lib/postgresql/*/bin/initdb 2>/dev/null | tail -1)")
	if [ ! -x "$bin/initdb" ]; then
		need initdb:postgresql-15
		bin=$(dirname "$(ls /usr/lib/postgresql/*/bin/initdb | tail -1)")
	fi
	pg_as=()
	if [ "$(id -u)" = 0 ]; then
		pg_as=(runuser -u postgres --)
		chmod 755 "$work"
	fi
	mkdir "$work/pg"
	[ ${#pg_as[@]} -gt 0 ] && chown postgres "$work/pg"
	"${pg_as[@]}" "$bin/initdb" -D "$work/pg/data" -U kbq -A trust -E UTF8 --no-sync >/dev/null
	port=$(free_port)
	"${pg_as[@]}" "$bin/pg_ctl" -D "$work/pg/data" -o "-p $port -k $work/pg -c listen_addresses=127.0.0.1" -l "$work/pg/log" -w start >/dev/null
	pg_ctl=$bin/pg_ctl
	pg_server="postgres://kbq@127.0.0.1:$port"
}

# free_port: a TCP port of 127.0.0.1 that nothing listens on, below the
# range the kernel hands out to outgoing connections, where a random pick
# could meet one of them and fail to listen.
free_port() {
	local low=10000 high=32767 start p
	if read -r start _ </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null && [ "$start" -gt $((low + 1000)) ]; then
		high=$((start - 1))
	fi
	for _ in $(seq 1 50); do
		p=$((low + RANDOM % (high - low)))
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			echo "$p"
			return
		fi
	done
	echo "free_port: no free port found" >&2
	return 1
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
