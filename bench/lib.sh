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
