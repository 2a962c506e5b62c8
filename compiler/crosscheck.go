package compiler

import (
	"bytes"
	"fmt"
	"sort"
	"strings"

	"github.com/kbqdev/kbq/artifact"
	"github.com/kbqdev/kbq/internal/units"
	"github.com/kbqdev/kbq/knowledge"
)

// docFacts is what the checks between documents need to know of one.
type docFacts struct {
	path, display, scope, kind string
	blob                       string
	id, idLine, idCol          int
	attachment                 string
	attLine, attCol            int
	bodyBytes                  int
	supersedes                 []ref
}

func factsOf(d *document, display string) docFacts {
	f := docFacts{path: d.Path, display: display, scope: d.Scope, kind: d.Kind, blob: d.Blob,
		id: d.meta.id, idLine: d.meta.idLine, idCol: d.meta.idCol,
		attachment: d.meta.attachment, attLine: d.meta.attLine, attCol: d.meta.attCol,
		supersedes: d.meta.supersedes}
	if d.src != nil {
		f.bodyBytes = len(bytes.TrimSpace(d.src.text[d.body:]))
	}
	return f
}

// crossCheck reports problems between documents: memory ids used twice in a
// scope, articles whose attachment is missing, and scopes whose context is
// over budget. docs are in path order; for a duplicate id the later files
// are in error. It returns the paths of documents with errors.
func crossCheck(docs []docFacts, attachments map[string]bool, budgets artifact.Budgets) (Diagnostics, map[string]bool) {
	var diags Diagnostics
	failed := make(map[string]bool)
	ids := make(map[string]docFacts) // scope + id
	contextBytes := make(map[string]int)
	contextDocs := make(map[string][]docFacts)
	for _, d := range docs {
		switch d.kind {
		case knowledge.KindMemory:
			if d.id == 0 {
				continue
			}
			key := fmt.Sprintf("%s\x00%d", d.scope, d.id)
			if first, dup := ids[key]; dup {
				diags = append(diags, Diagnostic{Path: d.display, Line: d.idLine, Col: d.idCol, Severity: Error,
					Message: fmt.Sprintf("duplicate memory id %d: %s already uses it in this scope (kbc remember picks the next free id)", d.id, first.display)})
				failed[d.path] = true
				continue
			}
			ids[key] = d
		case knowledge.KindArticle:
			if d.attachment != "" && !attachments[d.scope+"\x00"+d.attachment] {
				diags = append(diags, Diagnostic{Path: d.display, Line: d.attLine, Col: d.attCol, Severity: Error,
					Message: fmt.Sprintf("attachment %s does not exist in %s/ (add the file, or remove the attachment key)", d.attachment, kbDir(d.scope))})
				failed[d.path] = true
			}
		case knowledge.KindContext:
			contextBytes[d.scope] += d.bodyBytes
			contextDocs[d.scope] = append(contextDocs[d.scope], d)
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
			parts = append(parts, fmt.Sprintf("%s %.1f KiB", d.display, float64(d.bodyBytes)/1024))
		}
		first := contextDocs[s][0]
		diags = append(diags, Diagnostic{Path: first.display, Line: 1, Col: 1, Severity: Warning,
			Message: fmt.Sprintf("context of scope %s is %.1f KiB, over its %s budget (%s): agents load it into every prompt, so keep it short and move detail into topics (budgets are set in "+ConfigPath+")",
				s, float64(size)/1024, units.Bytes(int64(budget)), strings.Join(parts, ", "))})
	}
	return diags, failed
}
