package cmd_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kbqdev/kbq/internal/testreq"
)

// What go install github.com/kbqdev/kbq/cmd/kbq@latest gives, alone in its
// directory and with nothing else on PATH, searches, serves MCP and
// evaluates.
func TestKbqIsOneBinary(t *testing.T) {
	requireTools(t, "builds kbc and kbq", "git", "go")
	bins := buildTools(t, "./cmd/kbc", "./cmd/kbq")
	alone := t.TempDir()
	if err := os.Rename(filepath.Join(bins, "kbq"), filepath.Join(alone, "kbq")); err != nil {
		t.Fatal(err)
	}
	kbq := filepath.Join(alone, "kbq")

	repo := t.TempDir()
	os.MkdirAll(filepath.Join(repo, ".kb"), 0o755)
	os.WriteFile(filepath.Join(repo, ".kb", "deploy.md"), []byte("# Deploy\n\nRoll back with the previous tag.\n"), 0o644)
	os.WriteFile(filepath.Join(repo, ".kb", "evals.yaml"), []byte("- query: roll back\n  expect: [deploy]\n"), 0o644)
	gitEnv := append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+t.TempDir(), "XDG_STATE_HOME="+t.TempDir(),
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	run := func(stdin string, name string, args ...string) string {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir, cmd.Stdin = repo, strings.NewReader(stdin)
		cmd.Env = append(gitEnv, "PATH="+filepath.Dir(mustLookPath(t, "git")))
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", filepath.Base(name), strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	run("", "git", "init", "-q", "-b", "main")
	run("", "git", "add", "-A")
	run("", "git", "commit", "-q", "-m", "knowledge")
	run("", filepath.Join(bins, "kbc"), "build", "--no-global")

	if out := run("", kbq, "search", "roll back"); !strings.Contains(out, ".kb/deploy.md") {
		t.Errorf("kbq search:\n%s", out)
	}
	if out := run("", kbq, "eval"); !strings.Contains(out, "nDCG@10      1.0000") {
		t.Errorf("kbq eval:\n%s", out)
	}
	requests := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"knowledge_search","arguments":{"query":"roll back"}}}
`
	out := run(requests, kbq, "mcp")
	if !strings.Contains(out, `"serverInfo":{"name":"kbq"`) || !strings.Contains(out, "deploy.md") {
		t.Errorf("kbq mcp:\n%s", out)
	}
}

func mustLookPath(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		testreq.Skipf(t, testreq.Tools, "%s is not installed", name)
	}
	return p
}
