package artifact

import (
	"bytes"
	"path"
	"path/filepath"
	"strings"
)

// CheckWorktree compares the worktree record in the artifact directory dir
// with the knowledge under root, and returns the index the record names
// and what changed, sorted, at most limit of them (0: all; more says there
// were others). A record of up to maxFiles files is compared file by file
// (Worktree.Changed). Above that only the directories are, which tells
// added, removed and renamed files but not files edited in place; a
// directory whose knowledge entries changed is returned as "dir/".
//
// Such a record is compared as it is read, line by line, keeping nothing:
// at 3,800 directories, reading the record whole and then comparing took
// longer than the search it runs beside, most of it in fresh memory for
// the paths.
func CheckWorktree(dir, root string, maxFiles, limit int) (index string, changed []string, more bool, err error) {
	f, r, index, files, err := openWorktree(dir)
	if err != nil {
		return "", nil, false, err
	}
	defer f.Close()
	if files <= maxFiles {
		w, err := r.readAll(index)
		if err != nil {
			return "", nil, false, err
		}
		changed, more = w.Changed(root, limit)
		return index, changed, more, nil
	}

	w := &Worktree{Index: index}
	buf := make([]byte, 0, 512) // a directory's path, NUL-terminated for lstat
	for {
		kind, rest, err := r.next()
		switch {
		case err != nil:
			return "", nil, false, err
		case kind == 0 || kind == 'f': // the files, not compared, follow the directories
			return index, sorted(changed), more, nil
		case kind == 'c':
			w.ContextFiles = strings.Fields(string(rest))
			continue
		case kind != 'd':
			return "", nil, false, r.bad()
		}
		d, ok := parseDirLine(rest)
		if !ok {
			return "", nil, false, r.bad()
		}
		buf = append(buf[:0], root...)
		if len(d.path) > 0 {
			at := len(buf) + 1
			buf = append(append(buf, filepath.Separator), d.path...)
			for i := at; filepath.Separator != '/' && i < len(buf); i++ {
				if buf[i] == '/' {
					buf[i] = filepath.Separator
				}
			}
		}
		buf = append(buf, 0)
		st, ok := lstat(buf)
		if !ok || st.mod == d.mod {
			continue // a removed directory's parent reports it
		}
		if HashEntries(w.KnowledgeEntries(string(buf[:len(buf)-1]), string(d.path))) == d.entries {
			continue
		}
		if limit > 0 && len(changed) == limit {
			return index, sorted(changed), true, nil
		}
		changed = append(changed, path.Join(string(d.path), ".")+"/")
	}
}

// cutNumber parses the number before the first space of b, a signed
// decimal (base 10) or the 64 bits of a hexadecimal (base 16), and returns
// what follows the space. It allocates nothing.
func cutNumber(b []byte, base uint64) (n uint64, rest []byte, ok bool) {
	digits, rest, found := bytes.Cut(b, []byte(" "))
	neg := base == 10 && len(digits) > 0 && digits[0] == '-'
	if neg {
		digits = digits[1:]
	}
	if !found || len(digits) == 0 || len(digits) > 19 || base == 16 && len(digits) > 16 {
		return 0, nil, false
	}
	for _, c := range digits {
		var d uint64
		switch {
		case '0' <= c && c <= '9':
			d = uint64(c - '0')
		case base == 16 && 'a' <= c && c <= 'f':
			d = uint64(c-'a') + 10
		default:
			return 0, nil, false
		}
		n = n*base + d
	}
	if base == 10 && n > 1<<63-1 {
		return 0, nil, false
	}
	if neg {
		n = uint64(-int64(n))
	}
	return n, rest, true
}
