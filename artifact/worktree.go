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
)

// WorktreeFile is the name, in the artifact directory, of the record of
// what a build from the working tree saw on disk. It is kept beside the
// manifest, not in it, because it holds modification times: a manifest is
// the same for the same knowledge wherever it is built.
const WorktreeFile = "worktree.stamps"

const worktreeHeader = "kbq-worktree 1"

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
	// FilesOmitted is true when ReadWorktree left the files out.
	FilesOmitted bool
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

// MaxCheckedFiles is the most knowledge files whose stat data Changed
// compares: above it (a stat call costs microseconds, and a search
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

// ReadWorktree reads the record in the artifact directory dir, leaving the
// files out (FilesOmitted) when there are more than maxFiles. A missing
// record is os.ErrNotExist; one that does not parse is ErrCorrupt.
func ReadWorktree(dir string, maxFiles int) (*Worktree, error) {
	f, err := os.Open(filepath.Join(dir, WorktreeFile))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	w := &Worktree{}
	bad := func(line int) error {
		return fmt.Errorf("%w: %s line %d does not parse", ErrCorrupt, filepath.Join(dir, WorktreeFile), line)
	}
	// Read line by line: without the files, reading stops where they start,
	// and a large knowledge base's record is mostly files. A search reads
	// this beside its own work, so the buffer is small: a fresh page costs
	// a fault.
	lines := bufio.NewScanner(f)
	lines.Buffer(make([]byte, 0, 16<<10), 1<<20)
	for n := 1; lines.Scan(); n++ {
		line := lines.Bytes()
		if n == 1 {
			head, ok := bytes.CutPrefix(line, []byte(worktreeHeader+" "))
			index, files, ok2 := strings.Cut(string(head), " ")
			count, err := strconv.Atoi(files)
			if !ok || !ok2 || err != nil {
				return nil, bad(n)
			}
			w.Index = index
			w.FilesOmitted = count > maxFiles
			continue
		}
		if len(line) < 2 || line[1] != ' ' {
			return nil, bad(n)
		}
		rest := string(line[2:])
		switch line[0] {
		case 'c':
			w.ContextFiles = strings.Fields(rest)
		case 'f':
			if w.FilesOmitted {
				return w, nil
			}
			parts := strings.SplitN(rest, " ", 4)
			if len(parts) != 4 {
				return nil, bad(n)
			}
			mod, err1 := strconv.ParseInt(parts[0], 10, 64)
			size, err2 := strconv.ParseInt(parts[1], 10, 64)
			if err1 != nil || err2 != nil {
				return nil, bad(n)
			}
			blob := parts[2]
			if blob == "-" {
				blob = ""
			}
			w.Files = append(w.Files, FileStamp{Path: parts[3], Size: size, Mod: mod, Blob: blob})
		case 'd':
			parts := strings.SplitN(rest, " ", 3)
			if len(parts) != 3 {
				return nil, bad(n)
			}
			mod, err1 := strconv.ParseInt(parts[0], 10, 64)
			entries, err2 := strconv.ParseUint(parts[1], 16, 64)
			if err1 != nil || err2 != nil {
				return nil, bad(n)
			}
			w.Dirs = append(w.Dirs, DirStamp{Path: parts[2], Mod: mod, Entries: entries})
		default:
			return nil, bad(n)
		}
	}
	if err := lines.Err(); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrCorrupt, filepath.Join(dir, WorktreeFile), err)
	}
	if w.Index == "" {
		return nil, bad(1)
	}
	return w, nil
}

// Changed returns the knowledge files under root that differ from what
// the build saw, sorted: edited (by content, not only by time), removed,
// or added. Without the files (FilesOmitted), it returns the directories
// whose knowledge entries changed, as "dir/". At most limit are returned
// (0: all); more is true when there were others.
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
		if w.FilesOmitted {
			if !add(path.Join(d.Path, ".") + "/") {
				return sorted(paths), more
			}
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
		case inKB && e.Type().IsRegular() && (isMarkdown(name) || rel == ".kb" && name == "config.yaml"):
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
		case e.Type().IsRegular() && isMarkdown(e.Name()):
			return true
		case e.IsDir() && depth > 0 && holdsMarkdown(filepath.Join(dir, e.Name()), depth-1):
			return true
		}
	}
	return false
}

func isMarkdown(name string) bool {
	return strings.EqualFold(path.Ext(name), ".md")
}

// BlobHash is the git blob hash of data in hex, as git hash-object computes
// it.
func BlobHash(data []byte) string {
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00", len(data))
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil))
}
