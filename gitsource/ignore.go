package gitsource

import (
	"strings"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
)

// Ignore matches repository paths against patterns written as in a
// .gitignore file at the repository root: "drafts/", "*.tmp.md",
// "docs/**/old", "!keep.md".
type Ignore struct {
	matcher gitignore.Matcher
}

// NewIgnore compiles patterns; blank ones and comments are skipped.
func NewIgnore(patterns []string) *Ignore {
	ps := make([]gitignore.Pattern, 0, len(patterns))
	for _, p := range patterns {
		if strings.TrimSpace(p) == "" || strings.HasPrefix(p, "#") {
			continue
		}
		ps = append(ps, gitignore.ParsePattern(p, nil))
	}
	return &Ignore{matcher: gitignore.NewMatcher(ps)}
}

// Match reports whether the file at path (slash-separated) is ignored: it
// or a directory above it matches, as git excludes everything inside an
// ignored directory.
func (ig *Ignore) Match(path string) bool {
	parts := strings.Split(path, "/")
	for i := 1; i <= len(parts); i++ {
		if ig.matcher.Match(parts[:i], i < len(parts)) {
			return true
		}
	}
	return false
}
