package gitsource

import "testing"

func TestIgnore(t *testing.T) {
	ig := NewIgnore([]string{"drafts/", "*.tmp.md", "docs/**/old", "/top.md", "# a comment", "", "notes/*", "!notes/keep.md"})
	for path, want := range map[string]bool{
		"drafts/a.md":            true,
		"a/.kb/drafts/b.md":      true,
		"drafts":                 false, // a file named like the directory pattern
		"x/y.tmp.md":             true,
		"x/y.md":                 false,
		"docs/a/b/old/AGENTS.md": true,
		"docs/old/AGENTS.md":     true,
		"docs/new/AGENTS.md":     false,
		"top.md":                 true,
		"sub/top.md":             false,
		"notes/a.md":             true,
		"notes/keep.md":          false,
		"# a comment":            false,
	} {
		if got := ig.Match(path); got != want {
			t.Errorf("Match(%q) = %v, want %v", path, got, want)
		}
	}
}
