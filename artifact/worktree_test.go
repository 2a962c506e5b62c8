package artifact

import (
	"bytes"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// record stamps the files and directories below root as a build would.
func record(t *testing.T, root string, files []string, dirs []string) *Worktree {
	t.Helper()
	w := &Worktree{Index: "index-1", ContextFiles: []string{"AGENTS.md"}}
	for _, p := range files {
		abs := filepath.Join(root, p)
		fi, err := os.Stat(abs)
		if err != nil {
			t.Fatal(err)
		}
		data, _ := os.ReadFile(abs)
		w.Files = append(w.Files, FileStamp{Path: p, Size: fi.Size(), Mod: fi.ModTime().UnixNano(), Blob: BlobHash(data)})
	}
	for _, d := range dirs {
		abs := filepath.Join(root, d)
		fi, err := os.Stat(abs)
		if err != nil {
			t.Fatal(err)
		}
		w.Dirs = append(w.Dirs, DirStamp{Path: d, Mod: fi.ModTime().UnixNano(), Entries: HashEntries(w.KnowledgeEntries(abs, d))})
	}
	return w
}

func write(t *testing.T, name, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// saved writes w into an artifact directory, and returns it read back and
// the directory.
func saved(t *testing.T, w *Worktree) (*Worktree, string) {
	t.Helper()
	var b bytes.Buffer
	if err := EncodeWorktree(&b, w); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write(t, filepath.Join(dir, WorktreeFile), b.String())
	got, err := ReadWorktree(dir)
	if err != nil {
		t.Fatal(err)
	}
	return got, dir
}

func TestWorktreeChanged(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, ".kb/a.md"), "alpha\n")
	write(t, filepath.Join(root, ".kb/memories/001-x.md"), "x\n")
	write(t, filepath.Join(root, "main.go"), "package main\n")
	maxFiles := 100
	w, dir := saved(t, record(t, root, []string{".kb/a.md", ".kb/memories/001-x.md"}, []string{"", ".kb", ".kb/memories"}))
	if w.Index != "index-1" || len(w.Files) != 2 || len(w.Dirs) != 3 || w.ContextFiles[0] != "AGENTS.md" {
		t.Fatalf("round trip lost something: %+v", w)
	}
	check := func(want ...string) {
		t.Helper()
		if maxFiles >= len(w.Files) {
			if got, _ := w.Changed(root, 0); !slices.Equal(got, want) {
				t.Fatalf("Changed = %q, want %q", got, want)
			}
		}
		index, got, more, err := CheckWorktree(dir, root, maxFiles, 0)
		if err != nil || index != "index-1" || more || !slices.Equal(got, want) {
			t.Fatalf("CheckWorktree = %q, %q, %v, %v; want index-1, %q", index, got, more, err, want)
		}
	}
	check()

	// Touched, or rewritten with the same bytes: not a change. Hidden files
	// and files that are not knowledge: not a change either.
	later := time.Now().Add(2 * time.Second)
	os.Chtimes(filepath.Join(root, ".kb/a.md"), later, later)
	write(t, filepath.Join(root, ".kb/.a.md.swp"), "swap")
	write(t, filepath.Join(root, "other.go"), "package main\n")
	check()

	write(t, filepath.Join(root, ".kb/a.md"), "alpha edited\n")
	write(t, filepath.Join(root, ".kb/memories/002-y.md"), "y\n")
	write(t, filepath.Join(root, "AGENTS.md"), "rules\n")
	write(t, filepath.Join(root, ".kb/deploy/steps.md"), "steps\n")
	os.Remove(filepath.Join(root, ".kb/memories/001-x.md"))
	check(".kb/a.md", ".kb/deploy/", ".kb/memories/001-x.md", ".kb/memories/002-y.md", "AGENTS.md")
	if got, more := w.Changed(root, 2); len(got) != 2 || !more {
		t.Fatalf("Changed with a limit of 2 = %q, %v", got, more)
	}

	// Above the file limit only directories are compared.
	maxFiles = 1
	check("./", ".kb/", ".kb/memories/")
}

func TestReadWorktreeCorrupt(t *testing.T) {
	for _, text := range []string{"", "nonsense\n", "kbq-worktree 1 index-1\n", "kbq-worktree 1 index-1 1\nf x\n", "kbq-worktree 1 index-1 0\nd 12 zz a\n",
		"kbq-worktree 1 index-1 20\nd 12 zz a\n", "kbq-worktree 1 index-1 20\nd 12\n", "kbq-worktree 1 index-1 20\nd 1.5 ab a\n",
		"kbq-worktree 1 index-1 20\nq 12 ab a\n", "kbq-worktree 1 index-1 20\nd 99999999999999999999 ab a\n"} {
		dir := t.TempDir()
		write(t, filepath.Join(dir, WorktreeFile), text)
		if _, err := ReadWorktree(dir); err == nil {
			t.Errorf("ReadWorktree(%q) succeeded", text)
		}
		if _, _, _, err := CheckWorktree(dir, t.TempDir(), 10, 0); err == nil {
			t.Errorf("CheckWorktree(%q) succeeded", text)
		}
	}
}

// Comparing a record by its directories finds the directories whose
// knowledge changed among hundreds, shared among goroutines, and with a
// limit keeps the first in the record's order, whichever range held them.
func TestCheckWorktreeManyDirs(t *testing.T) {
	root := t.TempDir()
	dirs := []string{"", ".kb"}
	var files []string
	for i := range 600 {
		d := fmt.Sprintf(".kb/d%03d", i)
		dirs = append(dirs, d)
		files = append(files, d+"/a.md")
		write(t, filepath.Join(root, d, "a.md"), "a\n")
	}
	w := record(t, root, files, dirs)
	w.Dirs[5].Mod = -1 // a changed time with the same entries
	_, dir := saved(t, w)
	write(t, filepath.Join(root, ".kb/d007/b.md"), "added\n")
	os.RemoveAll(filepath.Join(root, ".kb/d100"))
	write(t, filepath.Join(root, ".kb/d200/sub/c.md"), "added below\n")
	write(t, filepath.Join(root, ".kb/d299/.swap"), "hidden\n")
	write(t, filepath.Join(root, ".kb/d450/b.md"), "added in the second half\n")
	want := []string{".kb/", ".kb/d007/", ".kb/d200/", ".kb/d450/"}
	if _, got, more, err := CheckWorktree(dir, root, 10, 0); err != nil || more || !slices.Equal(got, want) {
		t.Fatalf("CheckWorktree = %q, %v, %v; want %q", got, more, err, want)
	}
	for limit := 1; limit <= len(want); limit++ {
		_, got, more, err := CheckWorktree(dir, root, 10, limit)
		if err != nil || more != (limit < len(want)) || !slices.Equal(got, want[:limit]) {
			t.Fatalf("CheckWorktree with a limit of %d = %q, %v, %v", limit, got, more, err)
		}
	}
}

// A directory recorded without a hash (it changed while the build listed
// it) is looked at: files the record does not know are reported, and
// nothing else is.
func TestWorktreeUnhashedDir(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, ".kb/a.md"), "alpha\n")
	w := record(t, root, []string{".kb/a.md"}, []string{".kb"})
	w.Dirs[0].Entries, w.Dirs[0].Mod = 0, 1
	if got, _ := w.Changed(root, 0); len(got) != 0 {
		t.Fatalf("Changed = %q, want nothing", got)
	}
	write(t, filepath.Join(root, ".kb/b.md"), "bravo\n")
	if got, _ := w.Changed(root, 0); !slices.Equal(got, []string{".kb/b.md"}) {
		t.Fatalf("Changed = %q, want .kb/b.md", got)
	}
}

// HashEntries is FNV-1a over names, a slash after directories and a NUL
// after each: records written by earlier builds must still compare equal.
func TestHashEntriesIsFNV1a(t *testing.T) {
	entries := []Entry{{"a.md", false}, {"deploy", true}, {"ünïcode.md", false}, {"", false}}
	h := fnv.New64a()
	for _, e := range entries {
		h.Write([]byte(e.Name))
		if e.Dir {
			h.Write([]byte{'/'})
		}
		h.Write([]byte{0})
	}
	if got, want := HashEntries(entries), h.Sum64(); got != want {
		t.Errorf("HashEntries = %x, want FNV-1a %x", got, want)
	}
	if HashEntries(nil) != fnv.New64a().Sum64() {
		t.Error("HashEntries(nil) is not FNV-1a's offset basis")
	}
}
