package kbccli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kbqdev/kbq/internal/cli"
	"github.com/kbqdev/kbq/query"
)

// searchable waits until a search of the artifact in dir finds path.
func searchable(t *testing.T, dir, q, path string, want bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if ix, err := query.Open(dir); err == nil {
			resp, err := ix.Search(context.Background(), query.Request{Query: q, N: 5})
			ix.Close()
			hit := false
			if err == nil {
				for _, r := range resp.Results {
					hit = hit || r.Path == path
				}
			}
			if hit == want {
				return
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("search %q: %s found = %v never came", q, path, want)
}

func TestWatch(t *testing.T) {
	root := gitRepo(t, 2)
	var out, errb bytes.Buffer
	s := &cli.Streams{In: strings.NewReader(""), Out: &syncWriter{w: &out}, Err: &syncWriter{w: &errb},
		Getenv: func(string) string { return "" }}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- runWatch(ctx, s, &globalOptions{dir: root}, &watchOptions{source: sourceOptions{worktree: true, noGlobal: true, maxSize: "5MiB"}, debounce: 20 * time.Millisecond})
	}()
	kbq := filepath.Join(root, ".kbq")
	write := func(p, text string) {
		t.Helper()
		p = filepath.Join(root, p)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	searchable(t, kbq, "topic", ".kb/ta.md", true)

	// A new file, in a new directory too, is searchable once saved.
	write(".kb/badger.md", "# Badger\n\nThe badger sleeps by day.\n")
	searchable(t, kbq, "badger", ".kb/badger.md", true)
	write(".kb/animals/otter.md", "# Otter\n\nThe otter swims.\n")
	searchable(t, kbq, "otter swims", ".kb/animals/otter.md", true)

	// A bad file is reported and left out; the watch goes on, and the fix
	// is picked up.
	write(".kb/memories/001-bad.md", "---\nid: x\n---\nThe walrus naps.\n")
	searchable(t, kbq, "badger", ".kb/badger.md", true)
	write(".kb/badger.md", "# Badger\n\nThe badger digs at night.\n")
	searchable(t, kbq, "digs night", ".kb/badger.md", true)
	write(".kb/memories/001-bad.md", "---\nid: 1\ncreated: 2024-05-01T10:00:00Z\n---\nThe walrus naps.\n")
	searchable(t, kbq, "walrus naps", ".kb/memories/001-bad.md", true)
	os.Remove(filepath.Join(root, ".kb/badger.md"))
	searchable(t, kbq, "badger", ".kb/badger.md", false)

	cancel()
	if err := <-done; err != nil {
		t.Fatalf("watch ended with %v", err)
	}
	if !strings.Contains(out.String(), `001-bad.md:2:5: warning: id: must be an integer`) {
		t.Errorf("the bad file's diagnostics were not printed:\n%s", out.String())
	}
}
