package authoring

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
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
		// Cut between words, never inside one.
		"The billing API rate-limits at 100 requests a second, per key": "the-billing-api-rate-limits-at-100-requests-a",
		"Deploys go through the staging cluster before production":      "deploys-go-through-the-staging-cluster-before",
		"Exactly fifty characters long text goes here ok!! next":        "exactly-fifty-characters-long-text-goes-here-ok",
	} {
		if got := Slug(text); got != want {
			t.Errorf("Slug(%q) = %q, want %q", text, got, want)
		}
	}
}

// A write the file system refuses names the directory and what to do, not
// the temporary file it was writing, whether the refusal is a permission
// or a read-only mount (which root meets too).
func TestWriteFailed(t *testing.T) {
	dir := filepath.Join("repo", ".kb", "memories")
	for _, errno := range []syscall.Errno{syscall.EACCES, syscall.EROFS} {
		cause := &fs.PathError{Op: "open", Path: filepath.Join(dir, ".remember-123"), Err: errno}
		err := writeFailed("write memory", dir, cause)
		want := "write memory: " + dir + " is not writable (" + errno.Error() + "): make it writable, or work in a clone you can change"
		if err.Error() != want {
			t.Errorf("got %q\nwant %q", err, want)
		}
		if !errors.Is(err, errno) {
			t.Errorf("%v does not wrap %v", err, errno)
		}
	}
	other := errors.New("disk on fire")
	if err := writeFailed("write memory", dir, other); !errors.Is(err, other) || strings.Contains(err.Error(), "not writable") {
		t.Errorf("other errors pass through: %v", err)
	}
}
