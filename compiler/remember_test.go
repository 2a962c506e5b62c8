package compiler

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestRememberConcurrently(t *testing.T) {
	dir := t.TempDir()
	const n = 24
	paths := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Half the texts share a slug, so names and ids both collide
			// unless the writers take turns.
			paths[i], errs[i] = Remember(dir, fmt.Sprintf("same words %d", i%2), MemoryOptions{})
		}()
	}
	wg.Wait()
	ids := make(map[string]bool)
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("remember %d: %v", i, errs[i])
		}
		id := strings.SplitN(filepath.Base(paths[i]), "-", 2)[0]
		if ids[id] {
			t.Errorf("id %s written twice", id)
		}
		ids[id] = true
		data, err := os.ReadFile(paths[i])
		if err != nil || !strings.Contains(string(data), fmt.Sprintf("\nid: %d\n", mustAtoi(t, id))) {
			t.Errorf("%s: frontmatter id does not match its name: %s", paths[i], data)
		}
	}
	entries, _ := os.ReadDir(filepath.Join(dir, ".kb", "memories"))
	if len(entries) != n {
		t.Errorf("%d files in the memories directory, want %d (no temporary files left)", len(entries), n)
	}
}

func mustAtoi(t *testing.T, s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestRememberFormat(t *testing.T) {
	dir := t.TempDir()
	now := time.Date(2024, 5, 1, 12, 30, 0, 0, time.FixedZone("CEST", 2*3600))
	path, err := Remember(dir, "  Deploys: frozen on \"Fridays\"\n\n--- really ---\n", MemoryOptions{Tags: []string{"ops", " ", "a: b"}, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	want := "---\nid: 1\ncreated: 2024-05-01T12:30:00+02:00\ntags: [ops, 'a: b']\nsource: user-told\n---\nDeploys: frozen on \"Fridays\"\n\n--- really ---\n"
	if string(data) != want {
		t.Errorf("file:\n%s\nwant\n%s", data, want)
	}
	if filepath.Base(path) != "001-deploys-frozen-on-fridays-really.md" {
		t.Errorf("name %s", filepath.Base(path))
	}
}

func TestSlug(t *testing.T) {
	for text, want := range map[string]string{
		"Use retries (with backoff)!":   "use-retries-with-backoff",
		"Café crème ünïcødé":            "cafe-creme-unicode",
		"../../etc/passwd":              "etc-passwd",
		"日本語だけ":                         "memory",
		"---":                           "memory",
		strings.Repeat("abcdefghij", 8): "abcdefghijabcdefghijabcdefghijabcdefghijabcdefghij",
		"Rate-limit: 100 req/s":         "rate-limit-100-req-s",
	} {
		if got := Slug(text); got != want {
			t.Errorf("Slug(%q) = %q, want %q", text, got, want)
		}
	}
}
