package kbccli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kbqdev/kbq/internal/cli"
)

// gitRepo makes a committed repository with n topics.
func gitRepo(t *testing.T, n int) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	for i := range n {
		p := filepath.Join(dir, ".kb", "t"+strings.Repeat("x", i%3)+string(rune('a'+i%26))+".md")
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte("# Topic\n\nText.\n"), 0o644)
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.name=a", "-c", "user.email=a@b", "commit", "-q", "-m", "x"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	return dir
}

func run(t *testing.T, errTTY bool, args ...string) (stdout, stderr string, code int) {
	var out, errb bytes.Buffer
	s := &cli.Streams{In: strings.NewReader(""), Out: &out, Err: &errb, ErrTTY: errTTY,
		Getenv: func(k string) string {
			if k == "CI" {
				return "true"
			}
			return ""
		}}
	code = Main(args, s)
	return out.String(), errb.String(), code
}

func TestProgressOnlyOnATerminal(t *testing.T) {
	dir := gitRepo(t, 30)
	_, stderr, code := run(t, true, "-C", dir, "build")
	if code != 0 || !strings.Contains(stderr, "\r\x1b[Kcompiling 1/30") || !strings.Contains(stderr, "compiling 30/30") {
		t.Errorf("terminal: exit %d, stderr %q", code, stderr)
	}
	_, stderr, code = run(t, false, "-C", dir, "build")
	if code != 0 || strings.Contains(stderr, "\r") {
		t.Errorf("not a terminal: exit %d, stderr %q", code, stderr)
	}
}
