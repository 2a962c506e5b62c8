package knowledge

import (
	"bytes"
	"fmt"
	"strconv"
)

// MemoryName returns the file name of memory id whose text slugs to slug:
// NNN-slug.md.
func MemoryName(id int, slug string) string {
	return fmt.Sprintf("%03d-%s.md", id, slug)
}

// MemoryNameID reads the id of a memory file name, NNN-slug.md; ok is
// false for another name.
func MemoryNameID(name string) (id int, ok bool) {
	digits := 0
	for digits < len(name) && '0' <= name[digits] && name[digits] <= '9' {
		digits++
	}
	rest := name[digits:]
	if digits == 0 || len(rest) < len("-x.md") || rest[0] != '-' || rest[len(rest)-3:] != ".md" ||
		bytes.IndexByte([]byte(rest), '/') >= 0 {
		return 0, false
	}
	n, err := strconv.Atoi(name[:digits])
	return n, err == nil
}

// MemoryID reads the id a memory file's frontmatter gives, leniently (the
// file need not be valid otherwise): the first line id: N of its
// frontmatter. ok is false when it gives none.
func MemoryID(data []byte) (id int, ok bool) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	line, rest, _ := bytes.Cut(data, []byte("\n"))
	if !fence(line) {
		return 0, false
	}
	for len(rest) > 0 {
		line, rest, _ = bytes.Cut(rest, []byte("\n"))
		line = bytes.TrimRight(line, "\r")
		if fence(line) {
			return 0, false
		}
		v, found := bytes.CutPrefix(line, []byte("id:"))
		if !found {
			continue
		}
		v = bytes.TrimSpace(v)
		if len(v) == 0 || v[0] < '0' || v[0] > '9' {
			return 0, false
		}
		n, err := strconv.Atoi(string(v))
		return n, err == nil
	}
	return 0, false
}

// fence reports whether line closes or opens frontmatter.
func fence(line []byte) bool {
	return bytes.Equal(bytes.TrimRight(line, " \t\r"), []byte("---"))
}
