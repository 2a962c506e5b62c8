package gitdir_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kbqdev/kbq/internal/gitdir"
	"github.com/kbqdev/kbq/internal/testreq"
)

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+t.TempDir(), "GIT_AUTHOR_NAME=A", "GIT_AUTHOR_EMAIL=a@b.c", "GIT_COMMITTER_NAME=A", "GIT_COMMITTER_EMAIL=a@b.c")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func TestFindAndHead(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		testreq.Skip(t, testreq.Git, "git is not installed")
	}
	root, _ := filepath.EvalSymlinks(t.TempDir())
	repo := filepath.Join(root, "repo")
	os.MkdirAll(filepath.Join(repo, "a", "b"), 0o755)
	git(t, repo, "init", "-q", "-b", "main")

	// An unborn branch has no commit to name.
	d, err := gitdir.Find(filepath.Join(repo, "a", "b"))
	if err != nil || d.Worktree != repo || d.Git != filepath.Join(repo, ".git") || d.Common != d.Git {
		t.Fatalf("Find = %+v, %v", d, err)
	}
	if h := d.HeadCommit(); h != "" {
		t.Errorf("unborn HEAD = %q", h)
	}

	git(t, repo, "commit", "-q", "--allow-empty", "-m", "one")
	first := git(t, repo, "rev-parse", "HEAD")
	if h := d.HeadCommit(); h != first {
		t.Errorf("loose ref: HEAD = %q, want %q", h, first)
	}
	git(t, repo, "pack-refs", "--all")
	if h := d.HeadCommit(); h != first {
		t.Errorf("packed ref: HEAD = %q, want %q", h, first)
	}
	git(t, repo, "commit", "-q", "--allow-empty", "-m", "two")
	second := git(t, repo, "rev-parse", "HEAD")
	git(t, repo, "checkout", "-q", "--detach", first)
	if h := d.HeadCommit(); h != first {
		t.Errorf("detached: HEAD = %q, want %q", h, first)
	}
	git(t, repo, "checkout", "-q", "main")

	// A linked worktree: a .git file, and refs in the common directory.
	linked := filepath.Join(root, "linked")
	git(t, repo, "worktree", "add", "-q", "-b", "side", linked)
	d, err = gitdir.Find(linked)
	if err != nil || d.Worktree != linked || d.Common != filepath.Join(repo, ".git") || !strings.HasPrefix(d.Git, filepath.Join(repo, ".git", "worktrees")) {
		t.Fatalf("linked: Find = %+v, %v", d, err)
	}
	if h := d.HeadCommit(); h != second {
		t.Errorf("linked: HEAD = %q, want %q", h, second)
	}

	// A bare repository is found as itself.
	bare := filepath.Join(root, "bare.git")
	git(t, root, "clone", "-q", "--bare", repo, bare)
	d, err = gitdir.Find(bare)
	if err != nil || d.Worktree != "" || d.Git != bare || !gitdir.IsBare(bare) {
		t.Fatalf("bare: Find = %+v, %v", d, err)
	}
	if h := d.HeadCommit(); h != second {
		t.Errorf("bare: HEAD = %q, want %q", h, second)
	}

	// Outside any repository, and a .git file that is not one.
	if _, err := gitdir.Find(filepath.Join(root, "nowhere")); !errors.Is(err, gitdir.ErrNotFound) {
		t.Errorf("outside: %v", err)
	}
	odd := filepath.Join(root, "odd")
	os.MkdirAll(odd, 0o755)
	os.WriteFile(filepath.Join(odd, ".git"), []byte("nonsense\n"), 0o644)
	if _, err := gitdir.Find(odd); err == nil || !strings.Contains(err.Error(), "not a gitdir file") {
		t.Errorf("odd .git file: %v", err)
	}
}
