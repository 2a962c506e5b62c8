package gitsource

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/kbqdev/kbq/internal/testreq"
)

// A commit listed from the index says how many files it holds once it has
// listed one; listed by RevOnce, the decoded index is forgotten after,
// and by Rev it is kept for the next listing.
func TestRevOnceForgetsTheIndex(t *testing.T) {
	dir := committedRepo(t)
	for _, once := range []bool{true, false} {
		r, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		snap, err := r.rev("HEAD", once)
		if err != nil {
			t.Fatal(err)
		}
		n, _, hint := listAll(t, snap)
		if n != 12 || hint != n {
			t.Errorf("once=%v: %d files listed, %d foretold", once, n, hint)
		}
		if kept := r.index.idx != nil; kept == once {
			t.Errorf("once=%v: the decoded index kept: %v", once, kept)
		}
	}
}

// A working tree listed once knows its unchanged files' blobs from git's
// index, as one listed again and again does, then forgets the index; a
// second listing learns the blobs by reading.
func TestWorktreeOnceForgetsTheIndex(t *testing.T) {
	dir := committedRepo(t)
	for _, once := range []bool{true, false} {
		r, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		snap, err := r.worktree(once)
		if err != nil {
			t.Fatal(err)
		}
		for listing := range 2 {
			n, known, hint := listAll(t, snap)
			if n != 12 || hint != n {
				t.Errorf("once=%v, listing %d: %d files listed, %d foretold", once, listing, n, hint)
			}
			if want := 12; listing == 1 && once {
				want = 0
				if known != want {
					t.Errorf("once=%v, listing %d: %d blobs known, want %d", once, listing, known, want)
				}
			} else if known != want {
				t.Errorf("once=%v, listing %d: %d blobs known from the index, want %d", once, listing, known, want)
			}
			if kept := r.index.idx != nil; kept == once {
				t.Errorf("once=%v, listing %d: the decoded index kept: %v", once, listing, kept)
			}
		}
	}
}

// listAll lists snap and returns how many files it listed, how many with
// their blob known, and how many it foretold once it listed the first.
func listAll(t *testing.T, snap Snapshot) (n, known, hint int) {
	t.Helper()
	for f, err := range snap.Files() {
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			hint = snap.(interface{ SizeHint() int }).SizeHint()
		}
		n++
		if f.Blob != "" {
			known++
		}
	}
	return n, known, hint
}

// committedRepo is a repository of 12 knowledge files, committed, their
// modification times an hour back, so that git's index, written after,
// vouches for them.
func committedRepo(t *testing.T) string {
	if _, err := exec.LookPath("git"); err != nil {
		testreq.Skip(t, testreq.Git, "git is not installed")
	}
	dir := t.TempDir()
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("HOME", t.TempDir())
	for i := range 12 {
		name := filepath.Join(dir, fmt.Sprintf(".kb/d%d/n%d.md", i%3, i))
		os.MkdirAll(filepath.Dir(name), 0o755)
		os.WriteFile(name, []byte(fmt.Sprint(i)), 0o644)
		past := time.Now().Add(-time.Hour)
		os.Chtimes(name, past, past)
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"commit", "-q", "-m", "one"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=A", "GIT_AUTHOR_EMAIL=a@b.c", "GIT_COMMITTER_NAME=A", "GIT_COMMITTER_EMAIL=a@b.c")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return dir
}
