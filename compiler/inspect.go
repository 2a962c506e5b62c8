package compiler

import (
	"regexp"
	"strconv"

	"github.com/kbqdev/kbq/artifact"
)

// Validate checks data as the knowledge file at inner, its path inside a
// project's .kb/ directory (memories/001-x.md, deploy/steps.md), as a
// build would, and returns the diagnostics, which name inner.
func Validate(inner string, data []byte) Diagnostics {
	loc, _ := classifyInner(inner)
	loc.scope = artifact.ScopeProject
	return parseDocument(input{path: KBDir + "/" + inner, display: inner, loc: loc, data: data}).diags
}

var memoryIDRE = regexp.MustCompile(`(?m)^id:\s*([0-9]+)\s*$`)

// MemoryID reads the id a memory file's frontmatter gives, leniently (the
// file need not be valid otherwise); ok is false when it gives none.
func MemoryID(data []byte) (id int, ok bool) {
	src := newSource(data)
	fm := splitFrontmatter(src, false, func(int, int, string) {})
	m := memoryIDRE.FindSubmatch(src.text[:fm.body])
	if m == nil {
		return 0, false
	}
	n, err := strconv.Atoi(string(m[1]))
	return n, err == nil
}

// MemoryNameID reads the id of a memory file name, NNN-slug.md; ok is
// false for another name.
func MemoryNameID(name string) (id int, ok bool) {
	m := memoryNameRE.FindStringSubmatch(name)
	if m == nil {
		return 0, false
	}
	n, err := strconv.Atoi(m[1])
	return n, err == nil
}

// IsMarkdown reports whether a file name is a markdown document's.
func IsMarkdown(name string) bool { return isMarkdown(name) }
