package kbccli

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/kbqdev/kbq/artifact"
	"github.com/kbqdev/kbq/internal/testreq"
)

// A build of the working tree says whether the knowledge it read differs
// from HEAD's: files git's index vouches for and files read alike, an
// edit, a new file and a removed one.
func TestWorktreeBuildSaysWhetherItIsDirty(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		testreq.Skip(t, testreq.Git, "git is not installed")
	}
	dir := t.TempDir()
	past := time.Now().Add(-time.Hour) // before the index: its stat data vouches for them
	for _, name := range []string{"a.md", "b.md", "c/d.md"} {
		p := filepath.Join(dir, ".kb", name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte("# "+name+"\n\nText.\n"), 0o644)
		os.Chtimes(p, past, past)
	}
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	git("init", "-q")
	git("add", "-A")
	git("-c", "user.name=a", "-c", "user.email=a@b", "commit", "-q", "-m", "x")
	for _, step := range []struct {
		what  string
		do    func()
		dirty bool
	}{
		{"as committed", func() {}, false},
		{"an edit", func() { os.WriteFile(filepath.Join(dir, ".kb/b.md"), []byte("# b\n\nEdited.\n"), 0o644) }, true},
		{"the edit undone", func() { git("checkout", "--", ".kb/b.md") }, false},
		{"a new file", func() { os.WriteFile(filepath.Join(dir, ".kb/new.md"), []byte("# New\n"), 0o644) }, true},
		{"the new file gone", func() { os.Remove(filepath.Join(dir, ".kb/new.md")) }, false},
		{"a file removed", func() { os.Remove(filepath.Join(dir, ".kb/c/d.md")) }, true},
	} {
		step.do()
		if _, stderr, code := run(t, false, "-C", dir, "build", "--worktree"); code != 0 {
			t.Fatalf("%s: exit %d: %s", step.what, code, stderr)
		}
		m, err := artifact.ReadHeader(filepath.Join(dir, artifact.DefaultDir))
		if err != nil {
			t.Fatal(err)
		}
		if m.Source.Mode != "worktree" || m.Source.Dirty != step.dirty {
			t.Errorf("%s: source %s, dirty %v, want %v", step.what, m.Source.Mode, m.Source.Dirty, step.dirty)
		}
	}
}
