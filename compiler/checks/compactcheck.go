package checks

import (
	"cmp"
	"fmt"
	"path"
	"slices"

	"github.com/kbqdev/kbq/knowledge"
)

// LargeCategories warns about each category of knowledge over threshold
// tokens (about four bytes each) that compacting suits: the memories of a
// scope, and, when every document was read (allTopics), the notes of a
// directory (topics under a notes/ directory). Documentation brought in
// (a docs tree of topics) is never suggested for compaction: it is kept
// as written. Each warning is placed on the category's largest document
// that selected keeps.
func LargeCategories(facts []Facts, threshold int, allTopics bool, selected func(display string) bool) Diagnostics {
	if threshold < 0 {
		return nil
	}
	threshold = cmp.Or(threshold, DefaultCompactThreshold)
	type category struct {
		what, compact string
		bytes         int
		largest       *Facts
	}
	byName := map[string]*category{}
	for i := range facts {
		f := &facts[i]
		var name, what, compact string
		switch {
		case f.Kind == knowledge.KindMemory:
			name, what, compact = "memories\x00"+f.Scope, "the memories of scope "+f.Scope, f.Scope
		case f.Kind == knowledge.KindTopic && allTopics && isNotes(f.Path):
			dir := path.Dir(f.Path)
			name, what, compact = "topics\x00"+dir, "the topics of "+dir, dir
		default:
			continue
		}
		c := byName[name]
		if c == nil {
			c = &category{what: what, compact: compact}
			byName[name] = c
		}
		c.bytes += f.BodyBytes
		if selected(f.Display) && (c.largest == nil || f.BodyBytes > c.largest.BodyBytes) {
			c.largest = f
		}
	}
	var diags Diagnostics
	for _, name := range sortedNames(byName) {
		c := byName[name]
		if c.bytes/4 <= threshold || c.largest == nil {
			continue
		}
		diags = append(diags, Diagnostic{Path: c.largest.Display, Line: 1, Col: 1, Severity: Warning,
			Message: fmt.Sprintf("%s hold about %d tokens, over the %d of compact_threshold: kbc compact %s merges them into one summary for review (set compact_threshold in %s, 0 for no warning)",
				c.what, c.bytes/4, threshold, c.compact, knowledge.ConfigPath)})
	}
	return diags
}

// isNotes reports whether a topic at p is a note: under a directory named
// notes.
func isNotes(p string) bool {
	for dir := path.Dir(p); dir != "." && dir != "/"; dir = path.Dir(dir) {
		if path.Base(dir) == "notes" {
			return true
		}
	}
	return false
}

func sortedNames[V any](m map[string]V) []string {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}

// DefaultCompactThreshold is how many tokens (about four bytes each) a
// category of knowledge holds before kbc check suggests compacting it.
const DefaultCompactThreshold = 50_000
