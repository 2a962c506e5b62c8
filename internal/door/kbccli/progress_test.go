package kbccli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kbqdev/kbq/embedding/embeddingtest"
	"github.com/kbqdev/kbq/internal/cli"
	"github.com/kbqdev/kbq/internal/testreq"
)

// gitRepo makes a committed repository with n topics.
func gitRepo(t *testing.T, n int) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		testreq.Skip(t, testreq.Git, "git is not installed")
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
			switch k {
			case "CI":
				return "true"
			case "KBQ_MODELS":
				return os.Getenv(k) // a test's own, never the user's cache
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

	// Embedding shows its progress from its first chunk on (the 30 chunks
	// have one text between them).
	model := filepath.Join(t.TempDir(), "tiny")
	if err := embeddingtest.Default.Write(model); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KBQ_MODELS", t.TempDir())
	_, stderr, code = run(t, true, "-C", dir, "build", "--full", "--embed", model)
	if code != 0 || !strings.Contains(stderr, "\r\x1b[Kembedding 0/") || !strings.Contains(stderr, "embedding 1/1") {
		t.Errorf("embedding on a terminal: exit %d, stderr %q", code, stderr)
	}
	_, stderr, _ = run(t, false, "-C", dir, "build", "--full", "--embed", model)
	if strings.Contains(stderr, "\r") {
		t.Errorf("embedding, not a terminal: stderr %q", stderr)
	}
}
