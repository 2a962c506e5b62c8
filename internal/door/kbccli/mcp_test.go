package kbccli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kbqdev/kbq/gitsource"
	"github.com/kbqdev/kbq/internal/cli"
	"github.com/kbqdev/kbq/internal/door/kbqserve"
	"github.com/kbqdev/kbq/internal/filelock"
	"github.com/kbqdev/kbq/internal/mcptest"
)

// writerSession connects a client to kbc mcp's tools over the repository
// at root, run from root.
func writerSession(t *testing.T, root string, stage bool) *mcp.ClientSession {
	t.Helper()
	t.Chdir(root)
	var errb bytes.Buffer
	s := &cli.Streams{In: strings.NewReader(""), Out: &bytes.Buffer{}, Err: &syncWriter{w: &errb},
		Getenv: func(string) string { return "" }}
	repo, err := gitsource.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	srv := kbqserve.NewServer(s, "", "kbc", writerInstructions)
	w := &writer{srv: srv, repo: repo, root: repoRoot(repo), here: repoRoot(repo), s: s, stage: stage}
	w.register()
	return mcptest.Connect(t, srv.Server)
}

type syncWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

func callTool(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (string, map[string]any, bool) {
	t.Helper()
	res, structured := mcptest.Call(t, cs, name, args)
	return mcptest.Text(res), structured, res.IsError
}

func found(t *testing.T, cs *mcp.ClientSession, q string) []string {
	t.Helper()
	_, out, isErr := callTool(t, cs, "knowledge_search", map[string]any{"query": q})
	if isErr {
		return nil
	}
	var paths []string
	results, _ := out["results"].([]any)
	for _, r := range results {
		paths = append(paths, r.(map[string]any)["path"].(string))
	}
	return paths
}

func TestMCPWriteTools(t *testing.T) {
	root := gitRepo(t, 1)
	cs := writerSession(t, root, false)

	text, out, isErr := callTool(t, cs, "knowledge_remember", map[string]any{"text": "The zeppelin hangar opens at dawn", "tags": []string{"ops"}})
	if isErr || out["path"] != ".kb/memories/001-the-zeppelin-hangar-opens-at-dawn.md" || !strings.Contains(text, "a person reviews it in the pull request") {
		t.Fatalf("remember: %v %q %v", isErr, text, out)
	}
	if got := found(t, cs, "zeppelin hangar"); len(got) != 1 || got[0] != out["path"] {
		t.Fatalf("search after remember: %v", got)
	}

	// Writes are refused when a key leaves .kb/ or a blob is stale.
	if text, _, isErr := callTool(t, cs, "knowledge_write", map[string]any{"topic": "../evil", "content": "# Evil"}); !isErr || !strings.Contains(text, "leaves the .kb/ directory") {
		t.Fatalf("write ../evil: %v %q", isErr, text)
	}
	if _, _, isErr := callTool(t, cs, "knowledge_write", map[string]any{"topic": "ops/run", "content": "# Run\n\nRestart the quokka."}); isErr {
		t.Fatal("write a new topic failed")
	}
	_, doc, _ := callTool(t, cs, "knowledge_get", map[string]any{"ref": "ops/run"})
	blob, _ := doc["blob"].(string)
	if len(blob) != 40 {
		t.Fatalf("knowledge_get gave no blob: %v", doc)
	}
	if _, out, isErr := callTool(t, cs, "knowledge_write", map[string]any{"topic": "ops/run", "content": "# Run\n\nRestart the wombat.", "blob": blob}); isErr || out["action"] != "replaced" {
		t.Fatalf("replace with the blob read: %v %v", isErr, out)
	}
	if text, _, isErr := callTool(t, cs, "knowledge_write", map[string]any{"topic": "ops/run", "content": "# Run\n\nLost.", "blob": blob}); !isErr || !strings.Contains(text, "changed since it was read") {
		t.Fatalf("replace with a stale blob: %v %q", isErr, text)
	}
	if got := found(t, cs, "wombat"); len(got) != 1 || got[0] != ".kb/ops/run.md" {
		t.Fatalf("search after replace: %v", got)
	}

	// A write while a build holds the artifact's lock waits for it.
	lk, err := filelock.Wait(filepath.Join(root, ".kbq", ".lock"), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	go func() { time.Sleep(300 * time.Millisecond); lk() }()
	if _, out, isErr := callTool(t, cs, "knowledge_remember", map[string]any{"text": "The walrus naps on Tuesdays"}); isErr || out["indexed"] != true {
		t.Fatalf("remember while a build holds the lock: %v %v", isErr, out)
	}
	if got := found(t, cs, "walrus naps"); len(got) != 1 {
		t.Fatalf("search after the locked write: %v", got)
	}

	// Forget: gone from the working tree and from search.
	if _, _, isErr := callTool(t, cs, "knowledge_forget", map[string]any{"memory": "memory:1"}); isErr {
		t.Fatal("forget failed")
	}
	if _, err := os.Stat(filepath.Join(root, ".kb/memories/001-the-zeppelin-hangar-opens-at-dawn.md")); !os.IsNotExist(err) {
		t.Fatalf("the forgotten memory is still there: %v", err)
	}
	if got := found(t, cs, "zeppelin hangar"); len(got) != 0 {
		t.Fatalf("search after forget: %v", got)
	}
	if text, _, isErr := callTool(t, cs, "knowledge_forget", map[string]any{"memory": ".kb/ops/run.md"}); !isErr || !strings.Contains(text, "only removes memories") {
		t.Fatalf("forget a topic: %v %q", isErr, text)
	}

	// Nothing was committed.
	if log := gitOut(t, root, "log", "--oneline"); strings.Count(log, "\n") != 1 {
		t.Fatalf("writes made commits:\n%s", log)
	}
}

func TestMCPWriteStages(t *testing.T) {
	root := gitRepo(t, 1)
	cs := writerSession(t, root, true)
	if _, out, isErr := callTool(t, cs, "knowledge_write", map[string]any{"topic": "ops/run", "content": "# Run"}); isErr || out["staged"] != true {
		t.Fatalf("write with --stage: %v %v", isErr, out)
	}
	if status := gitOut(t, root, "status", "--porcelain", ".kb"); !strings.Contains(status, "A  .kb/ops/run.md") {
		t.Fatalf("not staged:\n%s", status)
	}
}

// A read-only working tree refuses the write with the reason.
func TestMCPWriteReadOnly(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root writes anywhere")
	}
	root := gitRepo(t, 1)
	cs := writerSession(t, root, false)
	os.Chmod(filepath.Join(root, ".kb"), 0o555)
	t.Cleanup(func() { os.Chmod(filepath.Join(root, ".kb"), 0o755) })
	if text, _, isErr := callTool(t, cs, "knowledge_remember", map[string]any{"text": "a fact"}); !isErr || !strings.Contains(text, ".kb is not writable (permission denied)") {
		t.Fatalf("remember in a read-only tree: %v %q", isErr, text)
	}
}

func gitOut(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v %s", args, err, out)
	}
	return string(out)
}
