package checks

import (
	"fmt"
	"sort"
	"strings"

	"github.com/kbqdev/kbq/artifact"
	"github.com/kbqdev/kbq/internal/units"
	"github.com/kbqdev/kbq/knowledge"
)

// Facts are what the checks between documents need to know of one.
type Facts struct {
	Path, Display, Scope, Kind string
	Blob                       string
	ID, IDLine, IDCol          int
	Attachment                 string
	AttLine, AttCol            int
	BodyBytes                  int
	Supersedes                 []Ref
	Contradicts                []Ref
	Status                     string
}

// Checked reports whether the checks between documents look at f: a
// memory's id, an article's attachment, a context's size, what a document
// supersedes or disputes, or its status. A build from nothing keeps no
// other document's facts: at 92,000 topics they were 21 MB held through
// the build.
func (f *Facts) Checked() bool {
	return f.Kind == knowledge.KindMemory || f.Kind == knowledge.KindContext || f.Attachment != "" ||
		len(f.Supersedes)+len(f.Contradicts) > 0 || f.Status != ""
}

// Cross reports problems between documents: memory ids used twice in a
// scope, articles whose attachment is missing, and scopes whose context is
// over budget. docs are in path order; for a duplicate id the later files
// are in error. It returns the paths of documents with errors.
func Cross(docs []Facts, attachments map[string]bool, budgets artifact.Budgets) (Diagnostics, map[string]bool) {
	var diags Diagnostics
	failed := make(map[string]bool)
	ids := make(map[string]Facts) // scope + id
	contextBytes := make(map[string]int)
	contextDocs := make(map[string][]Facts)
	for _, d := range docs {
		switch d.Kind {
		case knowledge.KindMemory:
			if d.ID == 0 {
				continue
			}
			key := fmt.Sprintf("%s\x00%d", d.Scope, d.ID)
			if first, dup := ids[key]; dup {
				diags = append(diags, Diagnostic{Path: d.Display, Line: d.IDLine, Col: d.IDCol, Severity: Error,
					Message: fmt.Sprintf("duplicate memory id %d: %s already uses it in this scope (kbc remember picks the next free id)", d.ID, first.Display)})
				failed[d.Path] = true
				continue
			}
			ids[key] = d
		case knowledge.KindArticle:
			if d.Attachment != "" && !attachments[d.Scope+"\x00"+d.Attachment] {
				diags = append(diags, Diagnostic{Path: d.Display, Line: d.AttLine, Col: d.AttCol, Severity: Error,
					Message: fmt.Sprintf("attachment %s does not exist in %s/ (add the file, or remove the attachment key)", d.Attachment, kbDir(d.Scope))})
				failed[d.Path] = true
			}
		case knowledge.KindContext:
			contextBytes[d.Scope] += d.BodyBytes
			contextDocs[d.Scope] = append(contextDocs[d.Scope], d)
		}
	}
	scopes := make([]string, 0, len(contextBytes))
	for s := range contextBytes {
		scopes = append(scopes, s)
	}
	sort.Strings(scopes)
	for _, s := range scopes {
		size, budget := contextBytes[s], budgets.Of(s)
		if size <= budget {
			continue
		}
		var parts []string
		for _, d := range contextDocs[s] {
			parts = append(parts, fmt.Sprintf("%s %.1f KiB", d.Display, float64(d.BodyBytes)/1024))
		}
		first := contextDocs[s][0]
		diags = append(diags, Diagnostic{Path: first.Display, Line: 1, Col: 1, Severity: Warning,
			Message: fmt.Sprintf("context of scope %s is %.1f KiB, over its %s budget (%s): agents load it into every prompt, so keep it short and move detail into topics (budgets are set in "+knowledge.ConfigPath+")",
				s, float64(size)/1024, units.Bytes(int64(budget)), strings.Join(parts, ", "))})
	}
	return diags, failed
}

// kbDir returns the .kb/ directory of a scope, relative to the repository
// root, for messages.
func kbDir(scope string) string {
	dir, ok := knowledge.ScopeDir(scope)
	switch {
	case !ok:
		return "the global knowledge directory"
	case dir == "":
		return knowledge.Dir
	}
	return strings.TrimSuffix(dir, "/") + "/" + knowledge.Dir
}
