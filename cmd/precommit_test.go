package cmd_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kbqdev/kbq/internal/version"
)

// Every place that pins a release names this one.
func TestVersionPinsAgree(t *testing.T) {
	want := "v" + version.Version
	pin := regexp.MustCompile(`(?:rev: |kbqdev/kbq@)(v[0-9]+\.[0-9]+\.[0-9]+)`)
	for _, name := range []string{"../.pre-commit-hooks.yaml", "../docs/ci.md", "../README.md", "../action.yml"} {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range pin.FindAllStringSubmatch(string(data), -1) {
			if m[1] != want {
				t.Errorf("%s pins %s, not %s", name, m[1], want)
			}
		}
	}
}

// The pre-commit framework's hook builds kbc alone, once, and checks the
// files it is given.
func TestPreCommitFrameworkHook(t *testing.T) {
	requireTools(t, "builds kbc", "git", "go", "sh")
	hook, err := filepath.Abs("../hooks/pre-commit-framework")
	if err != nil {
		t.Fatal(err)
	}
	repo := t.TempDir()
	bin := filepath.Join(t.TempDir(), "bin", "kbc")
	run := func(name string, args ...string) (string, error) {
		cmd := exec.Command(name, args...)
		cmd.Dir = repo
		cmd.Env = append(os.Environ(), "KBC_HOOK_BIN="+bin, "CI=true")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	os.MkdirAll(filepath.Join(repo, ".kb", "memories"), 0o755)
	os.WriteFile(filepath.Join(repo, ".kb", "memories", "001-x.md"), []byte("---\nid: one\ncreated: 2024-05-01T10:00:00Z\n---\nx\n"), 0o644)
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}} {
		if out, err := run("git", args...); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	out, err := run(hook, ".kb/memories/001-x.md")
	if err == nil || !strings.Contains(out, "kbc-check: building kbc (once)") || !strings.Contains(out, ".kb/memories/001-x.md:2:5: error: id") {
		t.Fatalf("first run: %v\n%s", err, out)
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("kbc was not built where asked: %v", err)
	}
	out, err = run(hook, ".kb/memories/001-x.md")
	if err == nil || strings.Contains(out, "building") {
		t.Fatalf("second run rebuilt, or passed: %v\n%s", err, out)
	}
}
