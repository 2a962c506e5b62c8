package authoring

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kbqdev/kbq/gitsource"
)

func TestWriteTopic(t *testing.T) {
	root := t.TempDir()
	path, replaced, err := WriteTopic(root, root, "deploy/steps", "# Steps\n\nRun make deploy.", TopicOptions{Title: "Steps", Tags: []string{"ops"}})
	if err != nil || replaced {
		t.Fatalf("create: %v, replaced %v", err, replaced)
	}
	if want := filepath.Join(root, ".kb", "deploy", "steps.md"); path != want {
		t.Fatalf("path %s, want %s", path, want)
	}
	data, _ := os.ReadFile(path)
	if got := string(data); got != "---\ntitle: Steps\ntags: [ops]\n---\n# Steps\n\nRun make deploy.\n" {
		t.Fatalf("content %q", got)
	}
	blob := gitsource.HashBlob(data)

	// Replacing needs the blob read, and it must still be the file's.
	if _, _, err := WriteTopic(root, root, "deploy/steps", "# Steps\n\nNew.", TopicOptions{}); !errors.Is(err, ErrStale) || !strings.Contains(err.Error(), "read it first") {
		t.Fatalf("replace without a blob: %v", err)
	}
	if _, replaced, err := WriteTopic(root, root, "deploy/steps.md", "# Steps\n\nNew.", TopicOptions{Blob: blob}); err != nil || !replaced {
		t.Fatalf("replace with the blob: %v, replaced %v", err, replaced)
	}
	if _, _, err := WriteTopic(root, root, "deploy/steps", "# Steps\n\nLost.", TopicOptions{Blob: blob}); !errors.Is(err, ErrStale) || !strings.Contains(err.Error(), "not the "+blob) {
		t.Fatalf("replace with a stale blob: %v", err)
	}
	if data, _ := os.ReadFile(path); !strings.Contains(string(data), "New.") {
		t.Fatalf("a refused write changed the file: %q", data)
	}
	if _, _, err := WriteTopic(root, root, "deploy/gone", "# Gone", TopicOptions{Blob: blob}); !errors.Is(err, ErrStale) {
		t.Fatalf("a blob for a file that does not exist: %v", err)
	}

	// A body with --- lines is content, not frontmatter, unless it starts so.
	if _, _, err := WriteTopic(root, root, "notes", "# Notes\n\n---\n\nA rule above.", TopicOptions{}); err != nil {
		t.Fatalf("--- inside the body: %v", err)
	}
	if _, _, err := WriteTopic(root, root, "fm", "---\ntitle: FM\ntags: [x]\n---\nBody.", TopicOptions{}); err != nil {
		t.Fatalf("content with frontmatter: %v", err)
	}
}

func TestWriteTopicRefuses(t *testing.T) {
	root := t.TempDir()
	for _, tc := range []struct {
		key, content string
		opts         TopicOptions
		want         string
	}{
		{"../evil", "x", TopicOptions{}, "leaves the .kb/ directory"},
		{"a/../../evil", "x", TopicOptions{}, "leaves the .kb/ directory"},
		{"/etc/passwd", "x", TopicOptions{}, "is a path"},
		{`a\b`, "x", TopicOptions{}, "is a path"},
		{"", "x", TopicOptions{}, "key is empty"},
		{"a b", "x", TopicOptions{}, "may hold only"},
		{".hidden", "x", TopicOptions{}, "may hold only"},
		{"context", "x", TopicOptions{}, "always-loaded context"},
		{"memories/x", "x", TopicOptions{}, "knowledge_remember"},
		{"attachments/x", "x", TopicOptions{}, "not for topics"},
		{"ok", "   \n ", TopicOptions{}, "content is empty"},
		{"ok", "a\x00b", TopicOptions{}, "NUL byte"},
		{"ok", strings.Repeat("x", MaxTopicBytes+1), TopicOptions{}, "over 512 KiB"},
		{"ok", "\xff\xfe", TopicOptions{}, "not valid UTF-8"},
		{"ok", "---\ntitle: X\n---\nBody", TopicOptions{Tags: []string{"a"}}, "has frontmatter"},
		{"ok", "---\ntitle: [unclosed\n---\nBody", TopicOptions{}, "invalid YAML in frontmatter"},
		{"ok", "key:\n-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gunVTLw\n-----END RSA PRIVATE KEY-----\n", TopicOptions{}, "private key"},
	} {
		_, _, err := WriteTopic(root, root, tc.key, tc.content, tc.opts)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("WriteTopic(%q, %.20q): %v, want %q", tc.key, tc.content, err, tc.want)
		}
	}
	if entries, _ := os.ReadDir(filepath.Join(root, ".kb")); len(entries) > 0 {
		t.Errorf("refused writes left %d entries in .kb/", len(entries))
	}
}

// A .kb/ that is a symbolic link, or a link on the way, is never written
// through, by a topic or a memory.
func TestWritesRefuseSymlinks(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	if err := os.Symlink(outside, filepath.Join(root, ".kb")); err != nil {
		t.Skip(err)
	}
	if _, _, err := WriteTopic(root, root, "x", "# X", TopicOptions{}); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("topic through a linked .kb: %v", err)
	}
	if _, err := Remember(root, "a fact", MemoryOptions{Root: root}); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("memory through a linked .kb: %v", err)
	}
	os.Remove(filepath.Join(root, ".kb"))
	os.MkdirAll(filepath.Join(root, ".kb"), 0o755)
	os.Symlink(outside, filepath.Join(root, ".kb", "ops"))
	if _, _, err := WriteTopic(root, root, "ops/x", "# X", TopicOptions{}); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("topic through a linked subdirectory: %v", err)
	}
	if entries, _ := os.ReadDir(outside); len(entries) > 0 {
		t.Errorf("a write landed outside the repository: %v", entries)
	}
}
