package artifact

import (
	"bytes"
	"path"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
)

// CheckWorktree compares the worktree record in the artifact directory dir
// with the knowledge under root, and returns the index the record names
// and what changed, sorted, at most limit of them (0: all; more says there
// were others). A record of up to maxFiles files is compared file by file
// (Worktree.Changed). Above that only the directories are, which tells
// added, removed and renamed files but not files edited in place; a
// directory whose knowledge entries changed is returned as "dir/".
//
// The directories' paths are read into one buffer rather than a string
// each (at 3,800 directories, fresh memory for the paths cost more than
// the search the check runs beside), and their stat calls are shared
// among the processors: at 30 copies of the PowerShell docs there are
// 3,800, and on one goroutine they took longer than the search.
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
	var dirs dirList
	for done := false; !done; {
		kind, rest, err := r.next()
		switch {
		case err != nil:
			return "", nil, false, err
		case kind == 0 || kind == 'f': // the files, not compared, follow the directories
			done = true
		case kind == 'c':
			w.ContextFiles = strings.Fields(string(rest))
		case kind != 'd':
			return "", nil, false, r.bad()
		default:
			d, ok := parseDirLine(rest)
			if !ok {
				return "", nil, false, r.bad()
			}
			dirs.add(root, d)
		}
	}
	changed = dirs.changed(w, limit)
	if limit > 0 && len(changed) > limit {
		changed, more = changed[:limit], true
	}
	return index, sorted(changed), more, nil
}

// dirList holds a record's directories: their absolute paths, each
// NUL-terminated for lstat, one after another in one buffer.
type dirList struct {
	buf  []byte
	dirs []dirAt
}

// dirAt is a directory of a dirList: buf[abs:end] is its path under the
// root, buf[rel:end] its path in the record, buf[end] a NUL.
type dirAt struct {
	mod           int64
	entries       uint64
	abs, rel, end int
}

func (l *dirList) add(root string, d dirLine) {
	at := dirAt{mod: d.mod, entries: d.entries, abs: len(l.buf)}
	l.buf = append(l.buf, root...)
	at.rel = len(l.buf)
	if len(d.path) > 0 {
		l.buf = append(l.buf, filepath.Separator)
		at.rel = len(l.buf)
		l.buf = append(l.buf, d.path...)
		for i := at.rel; filepath.Separator != '/' && i < len(l.buf); i++ {
			if l.buf[i] == '/' {
				l.buf[i] = filepath.Separator
			}
		}
	}
	at.end = len(l.buf)
	l.buf = append(l.buf, 0)
	l.dirs = append(l.dirs, at)
}

// parallelDirs is the fewest directories whose stat calls are shared
// among goroutines.
const parallelDirs = 256

// changed returns the directories whose knowledge entries differ from the
// record's, in the record's order: all of them, or the first limit+1.
func (l *dirList) changed(w *Worktree, limit int) []string {
	workers := min(runtime.GOMAXPROCS(0), max(1, len(l.dirs)/parallelDirs))
	found := make([][]string, workers)
	var wg sync.WaitGroup
	for k := range workers {
		// Contiguous ranges: their finds, joined in order, are in the
		// record's order.
		lo, hi := k*len(l.dirs)/workers, (k+1)*len(l.dirs)/workers
		run := wg.Go
		if workers == 1 {
			run = func(f func()) { f() } // no goroutine to start and wait for
		}
		run(func() {
			for _, d := range l.dirs[lo:hi] {
				st, ok := lstat(l.buf[d.abs : d.end+1])
				if !ok || st.mod == d.mod {
					continue // a removed directory's parent reports it
				}
				rel := string(l.buf[d.rel:d.end])
				if filepath.Separator != '/' {
					rel = filepath.ToSlash(rel)
				}
				if HashEntries(w.KnowledgeEntries(string(l.buf[d.abs:d.end]), rel)) == d.entries {
					continue
				}
				found[k] = append(found[k], path.Join(rel, ".")+"/")
				if limit > 0 && len(found[k]) > limit {
					return // the ranges after say nothing more
				}
			}
		})
	}
	wg.Wait()
	var out []string
	for _, f := range found {
		out = append(out, f...)
		if limit > 0 && len(out) > limit {
			return out[:limit+1]
		}
	}
	return out
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
