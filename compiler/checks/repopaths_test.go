package checks

import (
	"strings"
	"testing"
)

// The files and directories added are found whatever their case, and
// nothing else is: the hashes fold case as strings.ToLower does.
func TestRepoPaths(t *testing.T) {
	p := NewRepoPaths()
	for _, f := range []string{"docs/Guide/Intro.md", "README.md", "src/ÉTÉ/Café.go", "a/b/c/d.txt"} {
		p.Add(f)
	}
	for _, name := range []string{"", "docs", "DOCS/", "docs/guide", "Docs/GUIDE/intro.MD", "readme.md",
		"src", "src/été", "SRC/ÉTÉ/CAFÉ.GO", "a", "a/b", "a/b/c", "a/b/c/", "A/B/C/D.TXT"} {
		if !p.Exists(name) {
			t.Errorf("%q not found", name)
		}
	}
	for _, name := range []string{"doc", "docs/gui", "docs/guide/intro", "guide", "src/ete", "a/b/c/d", "b", "d.txt", "/docs", "docs//guide"} {
		if p.Exists(name) {
			t.Errorf("%q found, never added", name)
		}
	}
	// The hash of a name is the hash of its lowercase form, byte for byte.
	for _, name := range []string{"Ünïcödé/ΣΊΣΥΦΟΣ", "MiXeD/Case.MD", "\xff\xfe/Invalid", "İstanbul"} {
		if foldHash(name, nil) != foldHash(strings.ToLower(name), nil) {
			t.Errorf("%q hashes apart from its lowercase %q", name, strings.ToLower(name))
		}
	}
}
