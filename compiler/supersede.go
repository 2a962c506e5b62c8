package compiler

import (
	"fmt"
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/kbqdev/kbq/artifact"
	"github.com/kbqdev/kbq/knowledge"
)

// superseder is a document as the supersession check sees it.
type superseder struct {
	path, display, scope, kind, topic string
	id                                int
	refs                              []ref // line 0 when the position is not known
}

// resolveTarget finds the document text names (a topic key or memory:ID)
// as the document in scope sees it: the deepest scope that scope can see
// holding it. It returns -1 and why when there is none.
func resolveTarget(docs []superseder, scope, text string) (int, string) {
	idText, memory := strings.CutPrefix(text, "memory:")
	id, err := strconv.Atoi(idText)
	if memory && (err != nil || id < 1) {
		return -1, fmt.Sprintf("%q is not memory:ID with a number ID", text)
	}
	key := strings.TrimSuffix(strings.Trim(text, "/"), ".md")
	dir, inRepo := knowledge.ScopeDir(scope)
	best, hidden := -1, ""
	for i, d := range docs {
		match := memory && d.kind == knowledge.KindMemory && d.id == id || !memory && d.topic == key && d.kind != knowledge.KindMemory
		if !match {
			continue
		}
		// The global scope is seen from everywhere; a repository scope
		// from its directory and below.
		visible := d.scope == knowledge.ScopeGlobal || inRepo && knowledge.ScopeContains(d.scope, dir)
		if !visible {
			hidden = d.scope
			continue
		}
		if best < 0 || knowledge.ScopeDepth(d.scope) > knowledge.ScopeDepth(docs[best].scope) {
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

// checkSupersession reports, at each reference's position, a target that
// does not exist or that the document's scope cannot see, a document that
// supersedes itself, and cycles.
func checkSupersession(docs []superseder) Diagnostics {
	var diags Diagnostics
	report := func(d superseder, r ref, msg string) {
		line, col := r.line, r.col
		if line == 0 {
			line, col = 1, 1
		}
		diags = append(diags, Diagnostic{Path: d.display, Line: line, Col: col, Severity: Error, Message: "supersedes: " + msg})
	}
	edges := make([][]int, len(docs))
	for i, d := range docs {
		for _, r := range d.refs {
			t, why := resolveTarget(docs, d.scope, r.text)
			switch {
			case t < 0:
				report(d, r, why)
			case t == i:
				report(d, r, fmt.Sprintf("%s is this document itself", r.text))
			default:
				edges[i] = append(edges[i], t)
			}
		}
	}
	// A cycle: following what a document supersedes leads back to it.
	for i, d := range docs {
		for k, t := range edges[i] {
			if path := pathBack(edges, t, i, make([]bool, len(docs))); path != nil {
				names := []string{docs[i].display}
				for _, p := range path {
					names = append(names, docs[p].display)
				}
				report(d, d.refs[refIndex(d, docs, k, edges[i])], "a cycle: "+strings.Join(names, " supersedes ")+"; one of them must not supersede the other")
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

// refIndex is the index in d.refs of the k-th resolved edge.
func refIndex(d superseder, docs []superseder, k int, targets []int) int {
	n := -1
	for i, r := range d.refs {
		if t, _ := resolveTarget(docs, d.scope, r.text); t >= 0 && !(docs[t].path == d.path) {
			n++
			if n == k {
				return i
			}
		}
	}
	return 0
}

// superseders lists every document of the listing for the supersession
// check: what was read this time from facts, with the positions of its
// references; what was not, from the previous artifact's documents (prev,
// by path; nil for none), a memory's id else from its file name.
func superseders(l *listing, facts []docFacts, prev map[string]artifact.Document) []superseder {
	if !slices.ContainsFunc(facts, func(f docFacts) bool { return len(f.supersedes) > 0 }) &&
		!slices.ContainsFunc(slices.Collect(maps.Values(prev)), func(d artifact.Document) bool { return len(d.Supersedes) > 0 }) {
		return nil // nothing supersedes anything: nothing to check
	}
	read := make(map[string]docFacts, len(facts))
	for _, f := range facts {
		read[f.path] = f
	}
	out := make([]superseder, 0, len(l.docs))
	for _, c := range l.docs {
		s := superseder{path: c.path, display: c.display, scope: c.loc.Scope, kind: c.loc.Kind, topic: c.loc.Topic}
		if f, ok := read[c.path]; ok {
			s.id, s.refs = f.id, f.supersedes
		} else if p, ok := prev[c.path]; ok {
			s.id = p.ID
			for _, t := range p.Supersedes {
				s.refs = append(s.refs, ref{text: t})
			}
		}
		if s.id == 0 && s.kind == knowledge.KindMemory {
			name := path.Base(c.path)
			s.id, _ = strconv.Atoi(name[:len(name)-len(strings.TrimLeft(name, "0123456789"))])
		}
		out = append(out, s)
	}
	return out
}

// retired maps the documents that search and context leave out to what
// replaced them: those another document supersedes (to its path), and
// those whose status is deprecated or superseded (to "" when nothing names
// a successor). nil when there are none.
func retired(docs []artifact.Document) map[string]string {
	var out map[string]string
	set := func(p, by string) {
		if out == nil {
			out = make(map[string]string)
		}
		if out[p] == "" {
			out[p] = by
		}
	}
	var all []superseder
	for i, d := range docs {
		if d.Status == "deprecated" || d.Status == "superseded" {
			set(d.Path, "")
		}
		if len(d.Supersedes) == 0 {
			continue
		}
		if all == nil {
			all = make([]superseder, len(docs))
			for j, e := range docs {
				all[j] = superseder{path: e.Path, scope: e.Scope, kind: e.Kind, topic: e.Topic, id: e.ID}
			}
		}
		for _, text := range d.Supersedes {
			if t, _ := resolveTarget(all, d.Scope, text); t >= 0 && t != i {
				set(docs[t].Path, d.Path)
			}
		}
	}
	return out
}
