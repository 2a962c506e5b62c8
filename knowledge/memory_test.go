package knowledge

import "testing"

func TestMemoryNames(t *testing.T) {
	for name, want := range map[string]int{
		"001-x.md": 1, "042-use-retries.md": 42, "1000-a-b.md": 1000,
		"x.md": -1, "001.md": -1, "001-.md": -1, "001-x.MD": -1, "001-x.txt": -1, "a01-x.md": -1,
	} {
		id, ok := MemoryNameID(name)
		if ok != (want > 0) || ok && id != want {
			t.Errorf("MemoryNameID(%q) = %d, %v; want %d", name, id, ok, want)
		}
	}
	if got := MemoryName(7, "use-retries"); got != "007-use-retries.md" {
		t.Errorf("MemoryName = %q", got)
	}
	if id, ok := MemoryNameID(MemoryName(1234, "x")); !ok || id != 1234 {
		t.Errorf("MemoryNameID(MemoryName(1234)) = %d, %v", id, ok)
	}
}

func TestMemoryID(t *testing.T) {
	for data, want := range map[string]int{
		"---\nid: 12\ncreated: x\n---\nbody\n":   12,
		"\xef\xbb\xbf---\r\nid:  3 \r\n---\r\n":  3,
		"---\ntags: [a]\nid: 5\n---\n":           5,
		"---\ntitle: a\n---\nid: 9\n":            -1, // in the body
		"id: 4\n":                                -1, // no frontmatter
		"---\nid: x\n---\n":                      -1,
		"---\nid: -2\n---\n":                     -1,
		"---\nid: 8\n":                           8, // never closed: read leniently
		"---\nsource: x\n---\n---\nid: 1\n---\n": -1,
	} {
		id, ok := MemoryID([]byte(data))
		if ok != (want > 0) || ok && id != want {
			t.Errorf("MemoryID(%q) = %d, %v; want %d", data, id, ok, want)
		}
	}
}
