package gitsource_test

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kbqdev/kbq/gitsource"
	"github.com/kbqdev/kbq/internal/testreq"
)

// repo is a git repository in a temporary directory.
type repo struct {
	t   *testing.T
	dir string
}

func newRepo(t *testing.T) *repo {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		testreq.Skip(t, testreq.Git, "git is not installed")
	}
	r := &repo{t: t, dir: t.TempDir()}
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_CONFIG_HOME", "")
	if old, ok := os.LookupEnv("GIT_INDEX_FILE"); ok {
		os.Unsetenv("GIT_INDEX_FILE")
		t.Cleanup(func() { os.Setenv("GIT_INDEX_FILE", old) })
	}
	r.git("init", "-q", "-b", "main")
	r.git("config", "user.email", "a@b.c")
	r.git("config", "user.name", "A")
	return r
}

func (r *repo) git(args ...string) string {
	r.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = r.dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		r.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func (r *repo) write(path, content string) {
	r.t.Helper()
	p := filepath.Join(r.dir, filepath.FromSlash(path))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		r.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		r.t.Fatal(err)
	}
}

func (r *repo) commit(files map[string]string) {
	r.t.Helper()
	for p, c := range files {
		r.write(p, c)
	}
	r.git("add", "-A")
	r.git("commit", "-q", "-m", "commit")
}

func (r *repo) open() *gitsource.Repo {
	r.t.Helper()
	g, err := gitsource.Open(r.dir)
	if err != nil {
		r.t.Fatal(err)
	}
	return g
}

func list(t *testing.T, s gitsource.Snapshot) map[string]gitsource.File {
	t.Helper()
	out := make(map[string]gitsource.File)
	for f, err := range s.Files() {
		if err != nil {
			t.Fatal(err)
		}
		out[f.Path] = f
	}
	return out
}

func TestRev(t *testing.T) {
	r := newRepo(t)
	r.commit(map[string]string{".kb/a.md": "a\n", "docs/b.md": "b\n", "run.sh": "#!/bin/sh\n"})
	os.Chmod(filepath.Join(r.dir, "run.sh"), 0o755)
	os.Symlink("a.md", filepath.Join(r.dir, ".kb/link.md"))
	r.git("add", "-A")
	r.git("commit", "-q", "-m", "more")
	sub := newRepo(t)
	sub.commit(map[string]string{"x": "x"})
	r.git("-c", "protocol.file.allow=always", "submodule", "-q", "add", sub.dir, "vendor/sub")
	r.git("commit", "-q", "-m", "submodule")

	g := r.open()
	snap, err := g.Rev("HEAD")
	if err != nil {
		t.Fatal(err)
	}
	files := list(t, snap)
	if f := files[".kb/a.md"]; f.Blob != r.git("rev-parse", "HEAD:.kb/a.md") || f.Kind != gitsource.Regular {
		t.Errorf(".kb/a.md = %+v", f)
	}
	for path, kind := range map[string]gitsource.Kind{"run.sh": gitsource.Executable, ".kb/link.md": gitsource.Symlink, "vendor/sub": gitsource.Submodule} {
		if files[path].Kind != kind {
			t.Errorf("%s is %v, want %v", path, files[path].Kind, kind)
		}
	}
	data, err := snap.Read(files["docs/b.md"], 100)
	if err != nil || string(data) != "b\n" {
		t.Errorf("read = %q, %v", data, err)
	}
	if _, err := snap.Read(files["docs/b.md"], 1); !errors.Is(err, gitsource.ErrTooLarge) {
		t.Errorf("read over the cap: %v", err)
	}
	info := snap.Info()
	if info.Mode != "rev" || info.Commit != r.git("rev-parse", "HEAD") || info.Tree != r.git("rev-parse", "HEAD^{tree}") {
		t.Errorf("info = %+v", info)
	}
	old, err := g.Rev("HEAD~2")
	if err != nil || len(list(t, old)) != 3 {
		t.Errorf("HEAD~2: %v", err)
	}
	if _, err := g.Rev("no-such-branch"); !errors.Is(err, gitsource.ErrUnknownRevision) {
		t.Errorf("unknown revision: %v", err)
	}
	blobs, err := g.BlobsAt("HEAD", []string{".kb/a.md", "docs/b.md", "missing.md", "docs"})
	if err != nil || len(blobs) != 2 || blobs["docs/b.md"] != files["docs/b.md"].Blob {
		t.Errorf("BlobsAt = %v, %v", blobs, err)
	}
}

func TestOpenErrors(t *testing.T) {
	if _, err := gitsource.Open(t.TempDir()); !errors.Is(err, gitsource.ErrNotRepository) {
		t.Errorf("plain directory: %v", err)
	}
	if _, err := gitsource.Open(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("missing directory opened")
	}
	r := newRepo(t)
	if _, err := r.open().Rev("HEAD"); !errors.Is(err, gitsource.ErrUnknownRevision) || !strings.Contains(err.Error(), "no commits yet") {
		t.Errorf("empty repository: %v", err)
	}
}

func TestCorruptRepositoryFails(t *testing.T) {
	r := newRepo(t)
	r.commit(map[string]string{"a/b/c.md": "c"})
	tree := r.git("rev-parse", "HEAD:a/b")
	os.Remove(filepath.Join(r.dir, ".git", "objects", tree[:2], tree[2:]))
	os.Remove(filepath.Join(r.dir, ".git", "index")) // or HEAD is listed from it
	snap, err := r.open().Rev("HEAD")
	if err != nil {
		t.Fatal(err)
	}
	var walkErr error
	for _, err := range snap.Files() {
		walkErr = err
	}
	if walkErr == nil || !strings.Contains(walkErr.Error(), tree) {
		t.Errorf("walk of a repository missing tree %s ended with %v", tree, walkErr)
	}
}

// HEAD is listed from git's index while the index's cache tree says it
// holds HEAD's tree, and from the trees once a change is staged.
func TestRevListedFromIndex(t *testing.T) {
	r := newRepo(t)
	r.commit(map[string]string{"a/b/c.md": "c\n", "a/d.md": "d\n", "e.md": "e\n"})
	want := map[string]string{}
	for _, p := range []string{"a/b/c.md", "a/d.md", "e.md"} {
		want[p] = r.git("rev-parse", "HEAD:"+p)
	}
	// Without the tree a/b, only the index can list HEAD.
	tree := r.git("rev-parse", "HEAD:a/b")
	os.Remove(filepath.Join(r.dir, ".git", "objects", tree[:2], tree[2:]))
	snap, err := r.open().Rev("HEAD")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for f, err := range snap.Files() {
		if err != nil {
			t.Fatalf("HEAD listed from the index: %v", err)
		}
		got[f.Path] = f.Blob
	}
	if !maps.Equal(got, want) {
		t.Errorf("HEAD listed from the index = %v, want %v", got, want)
	}

	// A staged change makes the index differ from HEAD: the trees are read,
	// and the missing one is an error, not the staged content.
	r.write("e.md", "staged\n")
	r.git("add", "e.md")
	snap, err = r.open().Rev("HEAD")
	if err != nil {
		t.Fatal(err)
	}
	var walkErr error
	for _, err := range snap.Files() {
		if err != nil {
			walkErr = err
		}
	}
	if walkErr == nil || !strings.Contains(walkErr.Error(), tree) {
		t.Errorf("HEAD with a change staged was listed without its trees (error %v)", walkErr)
	}
}

func TestStaged(t *testing.T) {
	r := newRepo(t)
	r.commit(map[string]string{"a.md": "a\n", "b.md": "b\n"})
	r.write("a.md", "changed\n")
	r.write("c.md", "new\n")
	r.git("add", "a.md")
	r.git("add", "-N", "c.md") // intent to add: no content yet
	snap, err := r.open().Staged()
	if err != nil {
		t.Fatal(err)
	}
	files := list(t, snap)
	if files["a.md"].Blob != gitsource.HashBlob([]byte("changed\n")) {
		t.Errorf("a.md blob %s is not the staged content", files["a.md"].Blob)
	}
	if _, ok := files["c.md"]; ok {
		t.Error("an intent-to-add entry was listed")
	}

	// GIT_INDEX_FILE names another index.
	other := filepath.Join(t.TempDir(), "index")
	cmd := exec.Command("git", "read-tree", "HEAD")
	cmd.Dir, cmd.Env = r.dir, append(os.Environ(), "GIT_INDEX_FILE="+other)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("read-tree: %v %s", err, out)
	}
	t.Setenv("GIT_INDEX_FILE", other)
	snap, err = r.open().Staged()
	if err != nil {
		t.Fatal(err)
	}
	if got := list(t, snap)["a.md"].Blob; got != gitsource.HashBlob([]byte("a\n")) {
		t.Errorf("with GIT_INDEX_FILE, a.md blob %s is not HEAD's", got)
	}
}

func TestStagedConflict(t *testing.T) {
	r := newRepo(t)
	r.commit(map[string]string{"a.md": "base\n"})
	r.git("checkout", "-q", "-b", "other")
	r.commit(map[string]string{"a.md": "other\n"})
	r.git("checkout", "-q", "main")
	r.commit(map[string]string{"a.md": "main\n"})
	cmd := exec.Command("git", "merge", "-q", "other")
	cmd.Dir = r.dir
	cmd.Run() // conflicts
	snap, err := r.open().Staged()
	if err != nil {
		t.Fatal(err)
	}
	var kinds []gitsource.Kind
	for f, err := range snap.Files() {
		if err != nil {
			t.Fatal(err)
		}
		if f.Path == "a.md" {
			kinds = append(kinds, f.Kind)
		}
	}
	if !slices.Equal(kinds, []gitsource.Kind{gitsource.Unmerged}) {
		t.Errorf("a.md listed as %v, want once as unmerged", kinds)
	}
}

func TestStagedSplitAndSparseIndex(t *testing.T) {
	r := newRepo(t)
	r.commit(map[string]string{"a/x.md": "x\n", "b/y.md": "y\n"})
	r.git("update-index", "--split-index")
	r.write("a/x.md", "staged\n")
	r.git("add", "a/x.md")
	snap, err := r.open().Staged()
	if err != nil {
		t.Fatalf("split index: %v", err)
	}
	if got := list(t, snap)["a/x.md"].Blob; got != gitsource.HashBlob([]byte("staged\n")) {
		t.Errorf("split index: a/x.md blob %s", got)
	}

	s := newRepo(t)
	s.commit(map[string]string{"a/x.md": "x\n", "b/y.md": "y\n"})
	s.git("sparse-checkout", "set", "--cone", "--sparse-index", "a")
	g := s.open() // sparse checkout turns on extensions.worktreeConfig
	snap, err = g.Staged()
	if err != nil {
		t.Fatalf("sparse index: %v", err)
	}
	files := list(t, snap)
	if files["b/y.md"].Blob != gitsource.HashBlob([]byte("y\n")) {
		t.Errorf("sparse index: b/y.md outside the cone = %+v", files["b/y.md"])
	}
	if _, err := g.Rev("HEAD"); err != nil {
		t.Errorf("rev in a sparse checkout: %v", err)
	}
}

func TestWorktreeIgnoresAndStatCache(t *testing.T) {
	r := newRepo(t)
	excludes := filepath.Join(t.TempDir(), "ignore")
	os.WriteFile(excludes, []byte("*.global\n"), 0o644)
	r.git("config", "core.excludesFile", excludes)
	r.commit(map[string]string{
		".gitignore":      "build/\n*.log\n!keep.log\n",
		"docs/.gitignore": "draft*.md\n",
		"docs/a.md":       "a\n",
	})
	os.WriteFile(filepath.Join(r.dir, ".git/info/exclude"), []byte("secret.md\n"), 0o644)
	for _, p := range []string{"build/x.md", "x.log", "keep.log", "docs/draft1.md", "secret.md", "y.global", "new.md"} {
		r.write(p, p)
	}
	snap, err := r.open().Worktree()
	if err != nil {
		t.Fatal(err)
	}
	files := list(t, snap)
	var got []string
	for p := range files {
		got = append(got, p)
	}
	slices.Sort(got)
	want := []string{".gitignore", "docs/.gitignore", "docs/a.md", "keep.log", "new.md"}
	if !slices.Equal(got, want) {
		t.Errorf("worktree files %v, want %v", got, want)
	}
	// Files git knows unchanged come with their blob; others are hashed on
	// reading.
	if files["new.md"].Blob != "" {
		t.Errorf("untracked file has blob %q", files["new.md"].Blob)
	}
	data, err := snap.Read(files["new.md"], 100)
	if err != nil || string(data) != "new.md" {
		t.Errorf("read new.md = %q, %v", data, err)
	}
}

// TestWorktreeStat: a working-tree listing gives each file the kind, size
// and modification time lstat gives it, links not followed.
func TestWorktreeStat(t *testing.T) {
	r := newRepo(t)
	r.commit(map[string]string{"docs/a.md": "a\n"})
	r.write("docs/deep/b.md", "bee\n")
	r.write("run.sh", "#!/bin/sh\n")
	os.Chmod(filepath.Join(r.dir, "run.sh"), 0o755)
	os.Symlink("deep/b.md", filepath.Join(r.dir, "docs/link.md"))
	old := time.Date(2020, 1, 2, 3, 4, 5, 678, time.UTC)
	os.Chtimes(filepath.Join(r.dir, "docs/a.md"), old, old)
	snap, err := r.open().Worktree()
	if err != nil {
		t.Fatal(err)
	}
	files := list(t, snap)
	want := map[string]gitsource.Kind{"docs/a.md": gitsource.Regular, "docs/deep/b.md": gitsource.Regular, "run.sh": gitsource.Executable, "docs/link.md": gitsource.Symlink}
	for p, kind := range want {
		f, ok := files[p]
		if !ok || f.Kind != kind {
			t.Errorf("%s: %+v, want kind %v", p, f, kind)
			continue
		}
		if kind == gitsource.Symlink {
			continue
		}
		fi, err := os.Lstat(filepath.Join(r.dir, p))
		if err != nil {
			t.Fatal(err)
		}
		if f.Size != fi.Size() || f.Mod != fi.ModTime().UnixNano() {
			t.Errorf("%s: size %d mod %d, want %d and %d", p, f.Size, f.Mod, fi.Size(), fi.ModTime().UnixNano())
		}
	}
	if got := files["docs/a.md"].Mod; got != old.UnixNano() {
		t.Errorf("docs/a.md mod %d, want %d", got, old.UnixNano())
	}
}

func TestLinkedWorktree(t *testing.T) {
	r := newRepo(t)
	r.commit(map[string]string{".kb/a.md": "a\n"})
	wt := filepath.Join(t.TempDir(), "wt")
	r.git("worktree", "add", "-q", "-b", "feature", wt)
	os.WriteFile(filepath.Join(wt, ".kb/b.md"), []byte("b\n"), 0o644)
	cmd := exec.Command("git", "add", "-A")
	cmd.Dir = wt
	cmd.Run()
	g, err := gitsource.Open(filepath.Join(wt, ".kb"))
	if err != nil {
		t.Fatal(err)
	}
	if g.Root() != wt {
		t.Errorf("root = %s, want %s", g.Root(), wt)
	}
	snap, err := g.Staged()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := list(t, snap)[".kb/b.md"]; !ok {
		t.Error("the linked worktree's index was not read")
	}
	if _, err := g.Rev("HEAD"); err != nil {
		t.Errorf("rev in a linked worktree: %v", err)
	}
}

func TestDir(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "sub", ".obsidian"), 0o755)
	os.WriteFile(filepath.Join(dir, "sub", "a.md"), []byte("a"), 0o644)
	os.WriteFile(filepath.Join(dir, "sub", ".obsidian", "x.md"), []byte("x"), 0o644)
	os.WriteFile(filepath.Join(dir, ".hidden.md"), []byte("h"), 0o644)
	snap := gitsource.Dir(dir)
	files := list(t, snap)
	if len(files) != 1 || files["sub/a.md"].Kind != gitsource.Regular {
		t.Errorf("files = %v", files)
	}

	// Read gives the file whole, up to the cap and not over it.
	os.WriteFile(filepath.Join(dir, "sub", "a.md"), []byte("knowledge\n"), 0o644)
	for _, max := range []int64{10, 11, 1 << 20} {
		if data, err := snap.Read(files["sub/a.md"], max); err != nil || string(data) != "knowledge\n" {
			t.Errorf("read with a cap of %d: %q, %v", max, data, err)
		}
	}
	if _, err := snap.Read(files["sub/a.md"], 9); !errors.Is(err, gitsource.ErrTooLarge) || !strings.Contains(err.Error(), "sub/a.md is 10 bytes") {
		t.Errorf("over the cap: %v", err)
	}
	if _, err := snap.Read(gitsource.File{Path: "sub/gone.md"}, 9); !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "read sub/gone.md") {
		t.Errorf("a file gone since it was listed: %v", err)
	}
}

func TestReadLooseAndPacked(t *testing.T) {
	r := newRepo(t)
	big := strings.Repeat("knowledge compiles to an index. ", 4000)
	r.commit(map[string]string{"a.md": "a\n", "big.md": big, "empty.md": ""})
	read := func() map[string]string {
		snap, err := r.open().Rev("HEAD")
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for path, f := range list(t, snap) {
			data, err := snap.Read(f, 1<<20)
			if err != nil {
				t.Fatalf("read %s: %v", path, err)
			}
			got[path] = string(data)
		}
		if _, err := snap.Read(list(t, snap)["big.md"], 1000); !errors.Is(err, gitsource.ErrTooLarge) || strings.Contains(err.Error(), "read blob") {
			t.Errorf("over the cap: %v", err)
		}
		return got
	}
	want := map[string]string{"a.md": "a\n", "big.md": big, "empty.md": ""}
	if got := read(); !maps.Equal(got, want) {
		t.Errorf("loose objects read wrong")
	}
	r.git("gc", "-q")
	if got := read(); !maps.Equal(got, want) {
		t.Errorf("packed objects read wrong")
	}

	// A damaged loose object is an error naming it, never wrong content.
	r.commit(map[string]string{"c.md": "c\n"})
	blob := r.git("rev-parse", "HEAD:c.md")
	obj := filepath.Join(r.dir, ".git", "objects", blob[:2], blob[2:])
	os.Chmod(obj, 0o644)
	if err := os.WriteFile(obj, []byte("not zlib"), 0o644); err != nil {
		t.Fatal(err)
	}
	snap, err := r.open().Rev("HEAD")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := snap.Read(list(t, snap)["c.md"], 100); err == nil || !strings.Contains(err.Error(), blob) {
		t.Errorf("damaged object: %v", err)
	}
}

// A repository feature the reader does not implement fails by name, with
// its value, instead of being read wrongly.
func TestUnsupportedExtensionNamed(t *testing.T) {
	r := newRepo(t)
	r.git("config", "core.repositoryformatversion", "1")
	r.git("config", "extensions.objectFormat", "sha256")
	_, err := gitsource.Open(r.dir)
	if !errors.Is(err, gitsource.ErrUnsupported) {
		t.Fatalf("Open = %v, want ErrUnsupported", err)
	}
	if !strings.Contains(err.Error(), "extensions.objectFormat=sha256") {
		t.Errorf("error %q does not name the extension and its value", err)
	}
}

// TestLookup checks that every kind of snapshot finds one path as listing
// it does, and finds nothing where there is no file.
func TestLookup(t *testing.T) {
	r := newRepo(t)
	r.commit(map[string]string{".kb/config.yaml": "a: 1\n", ".kb/deep/x.md": "x\n", "top.md": "t\n"})
	r.write(".kb/config.yaml", "a: 2\n") // staged below, so index and HEAD differ
	r.git("add", ".kb/config.yaml")
	r.write(".kb/config.yaml", "a: 3\n")
	g := r.open()
	head, err := g.Rev("HEAD")
	if err != nil {
		t.Fatal(err)
	}
	staged, err := g.Staged()
	if err != nil {
		t.Fatal(err)
	}
	work, err := g.Worktree()
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		snap gitsource.Snapshot
		want string
	}{{"rev", head, "a: 1\n"}, {"staged", staged, "a: 2\n"}, {"worktree", work, "a: 3\n"}} {
		listed := list(t, tt.snap)
		for _, p := range []string{".kb/config.yaml", ".kb/deep/x.md", "top.md"} {
			f, ok, err := tt.snap.Lookup(p)
			if err != nil || !ok {
				t.Fatalf("%s: Lookup(%s) = %v, %v", tt.name, p, ok, err)
			}
			if l := listed[p]; f.Path != l.Path || f.Kind != l.Kind || tt.name != "worktree" && f.Blob != l.Blob {
				t.Errorf("%s: Lookup(%s) = %+v, listed %+v", tt.name, p, f, l)
			}
		}
		f, _, _ := tt.snap.Lookup(".kb/config.yaml")
		data, err := tt.snap.Read(f, 1<<20)
		if err != nil || string(data) != tt.want {
			t.Errorf("%s: read %q, %v; want %q", tt.name, data, err, tt.want)
		}
		for _, p := range []string{".kb", ".kb/none.yaml", "none/x", "top.md/x", ".kb/deep"} {
			if f, ok, err := tt.snap.Lookup(p); ok || err != nil {
				t.Errorf("%s: Lookup(%s) = %+v, %v, %v; want nothing", tt.name, p, f, ok, err)
			}
		}
	}
}

// Every revision resolves as git rev-parse resolves it, or is refused as
// an unknown revision: go-git alone reads HEAD@{1}, main@{upstream} and
// HEAD:path as HEAD.
func TestRevisionsResolveAsGitDoes(t *testing.T) {
	r := newRepo(t)
	for i := range 3 {
		r.commit(map[string]string{"f": fmt.Sprint(i)})
	}
	r.git("tag", "v1", "HEAD~1")
	r.git("tag", "-a", "v2", "-m", "annotated", "HEAD")
	r.git("checkout", "-q", "-b", "feat", "HEAD~2")
	r.commit(map[string]string{"g": "x"})
	r.git("checkout", "-q", "main")
	r.git("merge", "-q", "--no-edit", "feat")
	g := r.open()
	revs := []string{"HEAD", "@", "HEAD~1", "HEAD^", "HEAD^2", "HEAD~0", "HEAD^{commit}", "HEAD^{}", "v2^{}", "v2", "v1", "main", "feat",
		"refs/heads/main", "heads/main", "main~", "main^^", "v2~1", "@~1", "HEAD^{/commit}",
		"HEAD@{0}", "HEAD@{1}", "HEAD@{5}", "HEAD@{1}~1", "main@{1}", "main@{0}", "@{1}", "feat@{1}", "HEAD@{99}",
		"@{-1}", "main@{upstream}", "@{u}", "HEAD@{yesterday}", "HEAD:f", ":/commit", "HEAD^{tree}", "v2^{tag}", "HEAD~99", "nosuch",
		r.git("rev-parse", "--short", "HEAD~1"), r.git("rev-parse", "HEAD~2")}
	for _, rev := range revs {
		cmd := exec.Command("git", "rev-parse", "--verify", "-q", "--end-of-options", rev+"^{commit}")
		cmd.Dir = r.dir
		out, gitErr := cmd.Output()
		s, err := g.Rev(rev)
		switch {
		case err != nil && !errors.Is(err, gitsource.ErrUnknownRevision):
			t.Errorf("%s: %v, want a commit or an unknown revision", rev, err)
		case err == nil && gitErr != nil:
			t.Errorf("%s: resolved to %s where git rev-parse fails", rev, s.Info().Commit)
		case err == nil && s.Info().Commit != strings.TrimSpace(string(out)):
			t.Errorf("%s: %s, git rev-parse says %s", rev, s.Info().Commit, out)
		}
	}
	// The reflog forms that git knows are read, not refused.
	for _, rev := range []string{"HEAD@{1}", "main@{1}", "@{1}", "HEAD@{1}~1"} {
		if _, err := g.Rev(rev); err != nil {
			t.Errorf("%s: %v", rev, err)
		}
	}
}
