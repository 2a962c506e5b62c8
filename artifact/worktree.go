package artifact

import (
	"bufio"
	"bytes"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/kbqdev/kbq/internal/plainread"
)

// WorktreeFile is the name, in the artifact directory, of the record of
// what a build from the working tree saw on disk. It is kept beside the
// manifest, not in it, because it holds modification times: a manifest is
// the same for the same knowledge wherever it is built.
const WorktreeFile = "worktree.stamps"

// Worktree is what a build from the working tree saw of the knowledge
// files and the directories that hold them, so that a reader can tell,
// with a stat call per file, which changed since: git's stat cache, for
// the artifact.
type Worktree struct {
	// Index names the index the build made; the record holds only for a
	// manifest with the same.
	Index string
	// ContextFiles are the names of the agent context files picked up
	// outside .kb/.
	ContextFiles []string
	Files        []FileStamp
	Dirs         []DirStamp
}

// stamp is what lstat reads of a file.
type stamp struct {
	mod, size int64 // Unix nanoseconds, bytes
	regular   bool
}

// FileStamp is a knowledge file as a build read it.
type FileStamp struct {
	Path string // slash-separated, relative to the repository root
	Size int64
	Mod  int64  // Unix nanoseconds
	Blob string // git blob hash of the content compiled; "" when left out
}

// DirStamp is a directory that holds knowledge, or may come to: a
// directory inside a .kb/ tree, or one that holds a .kb/ or a context file.
type DirStamp struct {
	Path string // "" for the repository root
	Mod  int64
	// Entries is a hash of the names of the knowledge entries in the
	// directory (KnowledgeEntries), so that a changed modification time is
	// settled by whether knowledge was added, removed or renamed.
	Entries uint64
}

// MaxCheckedFiles is the most knowledge files whose stat data kbq
// compares (CheckWorktree's maxFiles): above it (a stat call costs microseconds, and a search
// milliseconds), only the directories are compared, which tells added,
// removed and renamed files (and editors that save by renaming) but not
// files edited in place.
const MaxCheckedFiles = 500

// EncodeWorktree writes w as lines: a header with the index and the number
// of files, the context file names, then "d MOD ENTRIES PATH" for each
// directory and "f MOD SIZE BLOB PATH" for each file, so that a reader can
// stop before the files. Paths holding a newline cannot be recorded and
// are left out; a change to them goes unnoticed.
func EncodeWorktree(wr io.Writer, w *Worktree) error {
	bw := bufio.NewWriter(wr)
	fmt.Fprintf(bw, "%s %s %d\n", worktreeHeader, w.Index, len(w.Files))
	fmt.Fprintf(bw, "c %s\n", strings.Join(w.ContextFiles, " "))
	// strconv rather than fmt: a record of 100,000 files is written by
	// every incremental build.
	var line []byte
	for _, d := range w.Dirs {
		if strings.ContainsAny(d.Path, "\n\r") {
			continue
		}
		line = append(line[:0], "d "...)
		line = strconv.AppendInt(line, d.Mod, 10)
		line = append(line, ' ')
		line = strconv.AppendUint(line, d.Entries, 16)
		line = append(append(append(line, ' '), d.Path...), '\n')
		bw.Write(line)
	}
	for _, f := range w.Files {
		if strings.ContainsAny(f.Path, "\n\r") {
			continue
		}
		blob := f.Blob
		if blob == "" {
			blob = "-"
		}
		line = append(line[:0], "f "...)
		line = strconv.AppendInt(line, f.Mod, 10)
		line = append(line, ' ')
		line = strconv.AppendInt(line, f.Size, 10)
		line = append(append(append(line, ' '), blob...), ' ')
		line = append(append(line, f.Path...), '\n')
		bw.Write(line)
	}
	return bw.Flush()
}

// ReadWorktree reads the record in the artifact directory dir. A missing
// record is os.ErrNotExist; one that does not parse is ErrCorrupt.
func ReadWorktree(dir string) (*Worktree, error) {
	f, r, index, _, err := openWorktree(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return r.readAll(index)
}

// worktreeReader reads the lines of a worktree record after its header.
type worktreeReader struct {
	r    *bufio.Reader
	name string // the file, for errors
	n    int    // the number of the line last read
}

// openWorktree opens the record in the artifact directory dir and reads
// its header: the index the record names and how many files it lists.
func openWorktree(dir string) (*os.File, *worktreeReader, string, int, error) {
	name := filepath.Join(dir, WorktreeFile)
	f, err := plainread.Open(name)
	if err != nil {
		return nil, nil, "", 0, err
	}
	// A search reads the record beside its own work, so the buffer is
	// small: a fresh page costs a fault.
	r := &worktreeReader{r: bufio.NewReaderSize(f, 16<<10), name: name, n: 1}
	head, err := r.r.ReadSlice('\n')
	rest, ok := bytes.CutPrefix(bytes.TrimSuffix(head, []byte("\n")), []byte(worktreeHeader+" "))
	index, count, ok2 := bytes.Cut(rest, []byte(" "))
	files, err2 := strconv.Atoi(string(count))
	if err != nil && err != io.EOF || !ok || !ok2 || err2 != nil || len(index) == 0 {
		f.Close()
		return nil, nil, "", 0, r.bad()
	}
	return f, r, string(index), files, nil
}

// next returns the next line's kind (its first byte) and what follows the
// space after it; the kind 0 at the end. The bytes are valid until the next call.
func (r *worktreeReader) next() (kind byte, rest []byte, err error) {
	line, err := r.r.ReadSlice('\n')
	r.n++
	switch {
	case err == bufio.ErrBufferFull: // a line of over 16 KB: not one a build writes
		return 0, nil, r.bad()
	case err == io.EOF && len(line) == 0:
		return 0, nil, nil
	case err != nil && err != io.EOF:
		return 0, nil, fmt.Errorf("%w: %s: %w", ErrCorrupt, r.name, err)
	}
	line = bytes.TrimSuffix(line, []byte("\n"))
	if len(line) < 2 || line[1] != ' ' {
		return 0, nil, r.bad()
	}
	return line[0], line[2:], nil
}

func (r *worktreeReader) bad() error {
	return fmt.Errorf("%w: %s line %d does not parse", ErrCorrupt, r.name, r.n)
}

// readAll reads the rest of the record into a Worktree.
func (r *worktreeReader) readAll(index string) (*Worktree, error) {
	w := &Worktree{Index: index}
	for {
		kind, rest, err := r.next()
		switch {
		case err != nil:
			return nil, err
		case kind == 0:
			return w, nil
		case kind == 'c':
			w.ContextFiles = strings.Fields(string(rest))
		case kind == 'd':
			d, ok := parseDirLine(rest)
			if !ok {
				return nil, r.bad()
			}
			w.Dirs = append(w.Dirs, DirStamp{Path: string(d.path), Mod: d.mod, Entries: d.entries})
		case kind == 'f':
			mod, rest, ok1 := cutNumber(rest, 10)
			size, rest, ok2 := cutNumber(rest, 10)
			blob, path, ok3 := bytes.Cut(rest, []byte(" "))
			if !ok1 || !ok2 || !ok3 {
				return nil, r.bad()
			}
			if string(blob) == "-" {
				blob = nil
			}
			w.Files = append(w.Files, FileStamp{Path: string(path), Size: int64(size), Mod: int64(mod), Blob: string(blob)})
		default:
			return nil, r.bad()
		}
	}
}

// dirLine is a "d MOD ENTRIES PATH" line of a record; path points into it.
type dirLine struct {
	mod     int64
	entries uint64
	path    []byte
}

func parseDirLine(rest []byte) (dirLine, bool) {
	mod, rest, ok1 := cutNumber(rest, 10)
	entries, path, ok2 := cutNumber(rest, 16)
	return dirLine{mod: int64(mod), entries: entries, path: path}, ok1 && ok2
}

// Changed returns the knowledge files under root that differ from what
// the build saw, sorted: edited (by content, not only by time), removed,
// or added. At most limit are returned (0: all); more is true when there
// were others.
func (w *Worktree) Changed(root string, limit int) (paths []string, more bool) {
	add := func(p string) bool {
		if limit > 0 && len(paths) == limit {
			more = true
			return false
		}
		paths = append(paths, p)
		return true
	}
	// Each path is built in one buffer, NUL-terminated for lstat: a large
	// knowledge base has thousands of directories to stat.
	buf := make([]byte, 0, 512)
	abs := func(rel string) []byte {
		buf = append(buf[:0], root...)
		if rel != "" {
			buf = append(append(buf, filepath.Separator), filepath.FromSlash(rel)...)
		}
		buf = append(buf, 0)
		return buf
	}
	var known map[string]bool // what the build saw, once a directory changed
	for _, f := range w.Files {
		if fileChanged(abs(f.Path), f) && !add(f.Path) {
			return sorted(paths), more
		}
	}
	for _, d := range w.Dirs {
		st, ok := lstat(abs(d.Path))
		if !ok || st.mod == d.Mod {
			continue // a removed directory's files are reported removed
		}
		dir := string(buf[:len(buf)-1])
		entries := w.KnowledgeEntries(dir, d.Path)
		if HashEntries(entries) == d.Entries {
			continue
		}
		if known == nil {
			known = make(map[string]bool, len(w.Files)+len(w.Dirs))
			for _, f := range w.Files {
				known[f.Path] = true
			}
			for _, d := range w.Dirs {
				known[d.Path] = true
			}
		}
		for _, e := range entries {
			p := path.Join(d.Path, e.Name)
			if known[p] || (e.Dir && !holdsMarkdown(filepath.Join(dir, e.Name), 3)) {
				continue
			}
			if e.IsDir() {
				p += "/"
			}
			if !add(p) {
				return sorted(paths), more
			}
		}
	}
	return sorted(paths), more
}

func sorted(paths []string) []string {
	slices.Sort(paths)
	return slices.Compact(paths)
}

// fileChanged reports whether f's file differs from what was compiled.
// Unchanged stat data is trusted, as git trusts it; changed stat data is
// settled by the content's blob hash, so that a file merely touched or
// checked out again is not reported.
func fileChanged(name []byte, f FileStamp) bool {
	st, ok := lstat(name)
	if !ok || !st.regular {
		return true
	}
	if st.size == f.Size && st.mod == f.Mod {
		return false
	}
	if f.Blob == "" || st.size != f.Size {
		return true
	}
	data, err := os.ReadFile(string(name[:len(name)-1]))
	return err != nil || BlobHash(data) != f.Blob
}

// Entry is a knowledge entry of a directory: a markdown file or directory
// inside a .kb/ tree, or a .kb/ or context file beside one.
type Entry struct {
	Name string
	Dir  bool
}

// IsDir reports whether the entry is a directory.
func (e Entry) IsDir() bool { return e.Dir }

// KnowledgeEntries lists, in name order, the entries of the directory at
// abs (rel in the repository) that are or may hold knowledge: inside a
// .kb/ tree, markdown files and directories; elsewhere, a .kb directory
// and context files. Hidden names (editors' swap and lock files) are left
// out.
func (w *Worktree) KnowledgeEntries(abs, rel string) []Entry {
	des, err := os.ReadDir(abs)
	if err != nil {
		return nil
	}
	return w.KnowledgeOf(rel, des)
}

// KnowledgeOf is KnowledgeEntries of a directory listed already.
func (w *Worktree) KnowledgeOf(rel string, des []fs.DirEntry) []Entry {
	inKB := strings.Contains("/"+rel+"/", "/.kb/")
	var out []Entry
	for _, e := range des {
		name := e.Name()
		switch {
		case inKB && strings.HasPrefix(name, "."):
		case inKB && e.IsDir():
			out = append(out, Entry{name, true})
		case inKB && e.Type().IsRegular() && (isKnowledgeText(name) || rel == ".kb" && name == "config.yaml"):
			out = append(out, Entry{name, false})
		case !inKB && name == ".kb" && e.IsDir():
			out = append(out, Entry{name, true})
		case !inKB && e.Type().IsRegular() && slices.Contains(w.ContextFiles, name):
			out = append(out, Entry{name, false})
		}
	}
	return out
}

// HashEntries is the FNV-1a hash of entries' names and kinds.
func HashEntries(entries []Entry) uint64 {
	const prime = 1099511628211
	h := uint64(14695981039346656037) // FNV-1a, written out: hash/fnv allocates per write
	add := func(c byte) { h = (h ^ uint64(c)) * prime }
	for _, e := range entries {
		for i := range len(e.Name) {
			add(e.Name[i])
		}
		if e.Dir {
			add('/')
		}
		add(0)
	}
	return h
}

// holdsMarkdown reports whether a markdown file is in dir or below it, down
// to depth levels.
func holdsMarkdown(dir string, depth int) bool {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range entries {
		switch {
		case strings.HasPrefix(e.Name(), "."):
		case e.Type().IsRegular() && isKnowledgeText(e.Name()):
			return true
		case e.IsDir() && depth > 0 && holdsMarkdown(filepath.Join(dir, e.Name()), depth-1):
			return true
		}
	}
	return false
}

// isKnowledgeText reports whether a file of a .kb/ directory is knowledge
// by its name: markdown, plain text or HTML.
func isKnowledgeText(name string) bool {
	switch strings.ToLower(path.Ext(name)) {
	case ".md", ".txt", ".html", ".htm":
		return true
	}
	return false
}

// BlobHash is the git blob hash of data in hex, as git hash-object computes
// it.
func BlobHash(data []byte) string {
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00", len(data))
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil))
}
