package artifact

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
)

// CheckWorktree compares the worktree record in the artifact directory dir
// with the knowledge under root, as ReadWorktree and Changed do, and
// returns the index the record names besides what changed.
//
// A record of more than maxFiles files is compared by its directories
// alone, and it is compared as it is read, line by line, keeping nothing:
// at 3,800 directories, reading the record whole and then comparing took
// longer than the search it runs beside, most of it in fresh memory for
// the paths.
func CheckWorktree(dir, root string, maxFiles, limit int) (index string, changed []string, more bool, err error) {
	name := filepath.Join(dir, WorktreeFile)
	f, err := os.Open(name)
	if err != nil {
		return "", nil, false, err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 16<<10)
	head, err := r.ReadSlice('\n')
	rest, ok := bytes.CutPrefix(bytes.TrimSuffix(head, []byte("\n")), []byte(worktreeHeader+" "))
	index1, count, ok2 := bytes.Cut(rest, []byte(" "))
	files, err2 := strconv.Atoi(string(count))
	if err != nil && err != io.EOF || !ok || !ok2 || err2 != nil {
		return "", nil, false, corruptWorktree(name, 1)
	}
	index = string(index1)
	if files <= maxFiles {
		w, err := ReadWorktree(dir, maxFiles)
		if err != nil {
			return "", nil, false, err
		}
		changed, more = w.Changed(root, limit)
		return w.Index, changed, more, nil
	}

	w := &Worktree{Index: index, FilesOmitted: true}
	buf := make([]byte, 0, 512) // a directory's path, NUL-terminated for lstat
	for n := 2; ; n++ {
		line, err := r.ReadSlice('\n')
		if err == bufio.ErrBufferFull { // a path of over 16 KB: not one a build records
			return "", nil, false, corruptWorktree(name, n)
		}
		if len(line) == 0 && err == io.EOF {
			break
		}
		if err != nil && err != io.EOF {
			return "", nil, false, err
		}
		line = bytes.TrimSuffix(line, []byte("\n"))
		if len(line) < 2 || line[1] != ' ' {
			return "", nil, false, corruptWorktree(name, n)
		}
		switch line[0] {
		case 'c':
			w.ContextFiles = strings.Fields(string(line[2:]))
			continue
		case 'f': // the files, which are not compared, follow the directories
			return index, sorted(changed), more, nil
		case 'd':
		default:
			return "", nil, false, corruptWorktree(name, n)
		}
		mod, line, ok1 := cutNumber(line[2:], 10)
		entries, rel, ok2 := cutNumber(line, 16)
		if !ok1 || !ok2 {
			return "", nil, false, corruptWorktree(name, n)
		}
		buf = append(buf[:0], root...)
		if len(rel) > 0 {
			at := len(buf) + 1
			buf = append(append(buf, filepath.Separator), rel...)
			for i := at; filepath.Separator != '/' && i < len(buf); i++ {
				if buf[i] == '/' {
					buf[i] = filepath.Separator
				}
			}
		}
		buf = append(buf, 0)
		st, ok := lstat(buf)
		if !ok || st.mod == int64(mod) {
			continue // a removed directory's parent reports it
		}
		if HashEntries(w.KnowledgeEntries(string(buf[:len(buf)-1]), string(rel))) == entries {
			continue
		}
		if limit > 0 && len(changed) == limit {
			more = true
			break
		}
		changed = append(changed, path.Join(string(rel), ".")+"/")
	}
	return index, sorted(changed), more, nil
}

func corruptWorktree(name string, line int) error {
	return fmt.Errorf("%w: %s line %d does not parse", ErrCorrupt, name, line)
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
