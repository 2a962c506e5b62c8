package checks

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/kbqdev/kbq/artifact"
	"github.com/kbqdev/kbq/knowledge"
)

// A Superseder is a document as the supersession check sees it.
type Superseder struct {
	Path, Display, Scope, Kind, Topic string
	ID                                int
	Refs                              []Ref // line 0 when the position is not known
	// Disputes are the documents it contradicts, and Status its own
	// status ("" for active).
	Disputes []Ref
	Status   string
}

// A Ref is a value of a list in frontmatter, such as a document another
// supersedes, and where it is written.
type Ref struct {
	Text      string
	Line, Col int
}

// resolveTarget finds the document text names (a topic key or memory:ID)
// as the document in scope sees it: the deepest scope that scope can see
// holding it. It returns -1 and why when there is none.
func resolveTarget(docs []Superseder, scope, text string) (int, string) {
	idText, memory := strings.CutPrefix(text, "memory:")
	id, err := strconv.Atoi(idText)
	if memory && (err != nil || id < 1) {
		return -1, fmt.Sprintf("%q is not memory:ID with a number ID", text)
	}
	key := strings.TrimSuffix(strings.Trim(text, "/"), ".md")
	dir, inRepo := knowledge.ScopeDir(scope)
	best, hidden := -1, ""
	for i, d := range docs {
		match := memory && d.Kind == knowledge.KindMemory && d.ID == id || !memory && d.Topic == key && d.Kind != knowledge.KindMemory
		if !match {
			continue
		}
		// The global scope is seen from everywhere; a repository scope
		// from its directory and below.
		visible := d.Scope == knowledge.ScopeGlobal || inRepo && knowledge.ScopeContains(d.Scope, dir)
		if !visible {
			hidden = d.Scope
			continue
		}
		if best < 0 || knowledge.ScopeDepth(d.Scope) > knowledge.ScopeDepth(docs[best].Scope) {
			best = i
		}
	}
	switch {
	case best >= 0:
		return best, ""
	case hidden != "":
		return -1, fmt.Sprintf("%s is in scope %s, which scope %s cannot see: a document supersedes only what is in force where it is", text, hidden, scope)
	}
	return -1, fmt.Sprintf("no document is %s (a topic key such as deploy/steps, or memory:ID)", text)
}

// Supersession reports, at each reference's position, a target that
// does not exist or that the document's scope cannot see, a document that
// supersedes itself, and cycles.
func Supersession(docs []Superseder) Diagnostics {
	var diags Diagnostics
	report := func(d Superseder, r Ref, msg string) {
		line, col := r.Line, r.Col
		if line == 0 {
			line, col = 1, 1
		}
		diags = append(diags, Diagnostic{Path: d.Display, Line: line, Col: col, Severity: Error, Message: "supersedes: " + msg})
	}
	edges := make([][]int, len(docs))
	for i, d := range docs {
		for _, r := range d.Refs {
			t, why := resolveTarget(docs, d.Scope, r.Text)
			switch {
			case t < 0:
				report(d, r, why)
			case t == i:
				report(d, r, fmt.Sprintf("%s is this document itself", r.Text))
			default:
				edges[i] = append(edges[i], t)
			}
		}
	}
	// A cycle: following what a document supersedes leads back to it.
	for i, d := range docs {
		for k, t := range edges[i] {
			if path := pathBack(edges, t, i, make([]bool, len(docs))); path != nil {
				names := []string{docs[i].Display}
				for _, p := range path {
					names = append(names, docs[p].Display)
				}
				report(d, d.Refs[refIndex(d, docs, k, edges[i])], "a cycle: "+strings.Join(names, " supersedes ")+"; one of them must not supersede the other")
			}
		}
	}
	return diags
}

// pathBack returns the documents from "from" to "to" along the edges, or
// nil when there is no way.
func pathBack(edges [][]int, from, to int, seen []bool) []int {
	if from == to {
		return []int{to}
	}
	if seen[from] {
		return nil
	}
	seen[from] = true
	for _, next := range edges[from] {
		if p := pathBack(edges, next, to, seen); p != nil {
			return append([]int{from}, p...)
		}
	}
	return nil
}

// refIndex is the index in d.Refs of the k-th resolved edge.
func refIndex(d Superseder, docs []Superseder, k int, targets []int) int {
	n := -1
	for i, r := range d.Refs {
		if t, _ := resolveTarget(docs, d.Scope, r.Text); t >= 0 && !(docs[t].Path == d.Path) {
			n++
			if n == k {
				return i
			}
		}
	}
	return 0
}

// Retired maps the documents that search and context leave out to what
// replaced them: those another document supersedes (to its path), and
// those whose status is deprecated or superseded (to "" when nothing names
// a successor). nil when there are none.
func Retired(docs []artifact.Document) map[string]string {
	var out map[string]string
	set := func(p, by string) {
		if out == nil {
			out = make(map[string]string)
		}
		if out[p] == "" {
			out[p] = by
		}
	}
	var all []Superseder
	for i, d := range docs {
		if d.Status == "deprecated" || d.Status == "superseded" {
			set(d.Path, "")
		}
		if len(d.Supersedes) == 0 {
			continue
		}
		if all == nil {
			all = targetsOf(docs)
		}
		for _, text := range d.Supersedes {
			if t, _ := resolveTarget(all, d.Scope, text); t >= 0 && t != i {
				set(docs[t].Path, d.Path)
			}
		}
	}
	return out
}

// Disputes reports, at each contradicts: reference's position, a target
// that does not exist, that the document's scope cannot see, or that is
// the document itself (errors), and a dispute neither side of which is
// superseded or deprecated (a warning: it is unresolved).
func Disputes(docs []Superseder) Diagnostics {
	var diags Diagnostics
	report := func(d Superseder, r Ref, sev Severity, msg string) {
		line, col := r.Line, r.Col
		if line == 0 {
			line, col = 1, 1
		}
		diags = append(diags, Diagnostic{Path: d.Display, Line: line, Col: col, Severity: sev, Message: "contradicts: " + msg})
	}
	retired := retiredOf(docs)
	for i, d := range docs {
		for _, r := range d.Disputes {
			t, why := resolveTarget(docs, d.Scope, r.Text)
			switch {
			case t < 0:
				report(d, r, Error, strings.Replace(why, "a document supersedes only", "a document disputes only", 1))
			case t == i:
				report(d, r, Error, fmt.Sprintf("%s is this document itself", r.Text))
			case !retired[i] && !retired[t]:
				report(d, r, Warning, fmt.Sprintf("%s and this document disagree, and neither is superseded: both are searched, marked disputed; supersede the one that is wrong (supersedes:, or kbc remember --supersedes), or remove contradicts", docs[t].Display))
			}
		}
	}
	return diags
}

// retiredOf marks the documents another supersedes, and those whose
// status retires them.
func retiredOf(docs []Superseder) []bool {
	out := make([]bool, len(docs))
	for i, d := range docs {
		if d.Status == "deprecated" || d.Status == "superseded" {
			out[i] = true
		}
		for _, r := range d.Refs {
			if t, _ := resolveTarget(docs, d.Scope, r.Text); t >= 0 && t != i {
				out[t] = true
			}
		}
	}
	return out
}

// Disputed maps each document in an unresolved dispute (contradicts:,
// neither side retired) to the paths of the documents it is in dispute
// with; nil when there are none.
func Disputed(docs []artifact.Document, retired map[string]string) map[string][]string {
	var out map[string][]string
	var all []Superseder
	for i, d := range docs {
		if len(d.Contradicts) == 0 {
			continue
		}
		if all == nil {
			all = targetsOf(docs)
		}
		for _, text := range d.Contradicts {
			t, _ := resolveTarget(all, d.Scope, text)
			if t < 0 || t == i {
				continue
			}
			_, goneA := retired[d.Path]
			_, goneB := retired[docs[t].Path]
			if goneA || goneB {
				continue
			}
			if out == nil {
				out = map[string][]string{}
			}
			for _, pair := range [][2]string{{d.Path, docs[t].Path}, {docs[t].Path, d.Path}} {
				if !slices.Contains(out[pair[0]], pair[1]) {
					out[pair[0]] = append(out[pair[0]], pair[1])
				}
			}
		}
	}
	for _, v := range out {
		slices.Sort(v)
	}
	return out
}

// targetsOf are docs as references resolve among them.
func targetsOf(docs []artifact.Document) []Superseder {
	out := make([]Superseder, len(docs))
	for i, d := range docs {
		out[i] = Superseder{Path: d.Path, Scope: d.Scope, Kind: d.Kind, Topic: d.Topic, ID: d.ID}
	}
	return out
}
