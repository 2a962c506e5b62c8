package query

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kbqdev/kbq/artifact"
	"github.com/kbqdev/kbq/artifact/postings"
	"github.com/kbqdev/kbq/knowledge"
	"github.com/kbqdev/kbq/query/syntax"
)

// plan is a parsed query turned into a Bluge query, plus what the index
// cannot check by itself: the artifact keeps no term positions, so phrases
// are matched as "all of these words" by the index and verified against
// the stored text of the few chunks that come back.
type plan struct {
	root       node            // nil when there is nothing to search for
	terms      map[string]bool // analyzed terms to highlight
	prefixes   []string        // lowercased prefixes to highlight
	phrases    [][]string      // every phrase must occur
	notPhrases [][]string      // no phrase may occur
	preferred  [][]string      // phrases that raise the score of chunks holding them
	searched   map[string]bool // every distinct term searched for, within maxTerms
	notes      []string        // what was left out to bound the query's cost
	// alternatives are the terms of each OR: any one of them answers,
	// for what the query's words can score at most (ideal).
	alternatives [][]string
}

// admit returns the distinct terms of one clause that the query's budget
// of maxTerms takes: those searched already, then new ones while there is
// room. It notes the first term left out.
func (pl *plan) admit(terms []string) []string {
	if pl.searched == nil {
		pl.searched = make(map[string]bool)
	}
	out := terms[:0:0]
	for _, t := range terms {
		if slices.Contains(out, t) {
			continue
		}
		if !pl.searched[t] {
			if len(pl.searched) >= maxTerms {
				pl.note(fmt.Sprintf("the query has more than %d distinct words: %q and those after it were left out; shorten it", maxTerms, t))
				continue
			}
			pl.searched[t] = true
		}
		out = append(out, t)
	}
	return out
}

func (pl *plan) note(s string) {
	if !slices.Contains(pl.notes, s) && len(pl.notes) < 8 {
		pl.notes = append(pl.notes, s)
	}
}

func (ix *Index) plan(p syntax.Parsed, an *artifact.Analyzer) *plan {
	pl := &plan{terms: make(map[string]bool)}
	p, pl.notes = bound(p)
	var b boolNode
	var filters []node
	for _, c := range p.Clauses {
		n := ix.clauseNode(c, an, pl)
		if n == nil {
			continue
		}
		switch {
		case c.Occur == syntax.Must && isFilter(c):
			// Filters narrow the results; they do not stand in for words.
			filters = append(filters, n)
		case c.Occur == syntax.Should:
			b.should = append(b.should, n)
		case c.Occur == syntax.Must:
			b.must = append(b.must, n)
		case c.Occur == syntax.MustNot:
			b.mustNot = append(b.mustNot, n)
		}
	}
	if len(b.should)+len(b.must)+len(b.mustNot)+len(filters) == 0 && len(pl.notPhrases) == 0 {
		return pl
	}
	b.should = collapseRepeats(b.should)
	var root node = b
	if len(b.should)+len(b.must) == 0 && len(b.mustNot) == 0 {
		root = allNode{}
	}
	if len(filters) > 0 {
		root = boolNode{must: append([]node{root}, filters...)}
	}
	pl.root = root
	return pl
}

// constraints are what a query requires and excludes, apart from the words
// it ranks by: filters, +word, -word, NOT, required and excluded phrases.
// The channel that ranks by meaning honours them as the lexical one does.
type constraints struct {
	must, mustNot []node
	pl            *plan // the phrases to verify in the chunks' text
}

func (ix *Index) constraints(p syntax.Parsed, an *artifact.Analyzer) constraints {
	c := constraints{pl: &plan{terms: make(map[string]bool)}}
	p, _ = bound(p) // the lexical plan notes what it drops
	for _, cl := range p.Clauses {
		if cl.Occur == syntax.Should {
			continue
		}
		n := ix.clauseNode(cl, an, c.pl)
		switch {
		case n == nil:
		case cl.Occur == syntax.Must:
			c.must = append(c.must, n)
		default:
			c.mustNot = append(c.mustNot, n)
		}
	}
	return c
}

// collapseRepeats merges optional clauses that are the same one term into
// one node that counts it as often, which scores as their sum does: a
// pasted text repeating a word reads its postings once, not once a repeat.
func collapseRepeats(ns []node) []node {
	single := func(n node) (textNode, bool) {
		if a, ok := n.(anyNode); ok && len(a) == 1 {
			n = a[0]
		}
		t, ok := n.(textNode)
		return t, ok
	}
	type termIn struct {
		term string
		in   [postings.Fields]bool
	}
	first := make(map[termIn]int) // index in out
	out := ns[:0:0]
	for _, n := range ns {
		t, ok := single(n)
		if !ok {
			out = append(out, n)
			continue
		}
		key := termIn{t.term, t.in}
		if i, seen := first[key]; seen {
			u := out[i].(textNode)
			u.times += t.times
			out[i] = u
			continue
		}
		first[key] = len(out)
		out = append(out, t)
	}
	return out
}

// isFilter reports whether a clause only narrows results: a facet filter,
// or a group of them.
func isFilter(c syntax.Clause) bool {
	if c.Kind == syntax.Filter {
		return true
	}
	if c.Kind != syntax.Any {
		return false
	}
	for _, s := range c.Sub {
		if !isFilter(s) {
			return false
		}
	}
	return true
}

// analyzePhrase returns the index terms of text with "" where a stop word
// (or an overlong word) stood, so that phrases keep their gaps as Lucene's
// positions do: "state of the art" does not match "state art".
func analyzePhrase(text string, an *artifact.Analyzer) []string {
	var terms []string
	data := []byte(text)
	artifact.Words(data, func(start, end int) {
		terms = append(terms, string(an.Term(data[start:end])))
	})
	for len(terms) > 0 && terms[0] == "" {
		terms = terms[1:]
	}
	for len(terms) > 0 && terms[len(terms)-1] == "" {
		terms = terms[:len(terms)-1]
	}
	return terms
}

// analyze returns the index terms of text.
func analyze(text string, an *artifact.Analyzer) []string {
	var terms []string
	an.Terms([]byte(text), func(t []byte, _, _ int) { terms = append(terms, string(t)) })
	return terms
}

// clauseNode builds the node of one clause, or nil when the clause has
// nothing to search for (only stop words, say).
func (ix *Index) clauseNode(c syntax.Clause, an *artifact.Analyzer, pl *plan) node {
	fields := artifact.TextFields
	if c.Field == "title" {
		fields = []string{artifact.FieldTitle}
	}
	positive := c.Occur != syntax.MustNot
	switch c.Kind {
	case syntax.All:
		return allNode{}
	case syntax.Word, syntax.Phrase:
		all := analyze(c.Text, an)
		terms := pl.admit(all)
		if len(terms) == 0 || c.Kind == syntax.Phrase && len(terms) < len(slices.Compact(slices.Sorted(slices.Values(all)))) {
			return nil // only stop words, or over the budget: a phrase is checked whole or not at all
		}
		if positive {
			for _, t := range terms {
				pl.terms[t] = true
			}
		}
		if c.Kind == syntax.Phrase && len(terms) > 1 {
			phrase := analyzePhrase(c.Text, an)
			switch c.Occur {
			case syntax.MustNot:
				pl.notPhrases = append(pl.notPhrases, phrase)
				return nil
			case syntax.Should:
				pl.preferred = append(pl.preferred, phrase)
			default:
				pl.phrases = append(pl.phrases, phrase)
			}
		}
		ns := make([]node, len(terms))
		for i, t := range terms {
			ns[i] = newTextNode(t, fields, ix.ranking)
		}
		if c.Occur == syntax.Should {
			return anyNode(ns)
		}
		return boolNode{must: ns}
	case syntax.Prefix, syntax.Wildcard:
		pattern := strings.ToLower(c.Text)
		if strings.Trim(pattern, "*?") == "" {
			return nil
		}
		if positive && c.Kind == syntax.Prefix {
			pl.prefixes = append(pl.prefixes, pattern)
		}
		// Index terms are stemmed ("deploys" is indexed as "deploi"), so a
		// prefix is also tried in its stemmed form. Wildcards match index
		// terms as they are.
		prefixes := []string{pattern}
		if stem := an.Term([]byte(pattern)); c.Kind == syntax.Prefix && stem != nil && string(stem) != pattern && !strings.HasPrefix(string(stem), pattern) {
			prefixes = append(prefixes, string(stem))
		}
		if c.Kind == syntax.Wildcard {
			return expandNode{fields: fields, wildcard: pattern, text: true}
		}
		var ns anyNode
		for _, p := range prefixes {
			ns = append(ns, expandNode{fields: fields, prefix: p, text: true})
		}
		return ns
	case syntax.Filter:
		switch c.Field {
		case "tag":
			return facetNode(artifact.FacetTag(c.Text))
		case "kind":
			return facetNode(artifact.FacetKind(strings.ToLower(c.Text)))
		case "scope":
			return scopeNode(c.Text)
		case "path":
			return expandNode{fields: []string{artifact.FieldPath}, prefix: strings.TrimPrefix(c.Text, "./")}
		case "status":
			return ix.statusNode(strings.ToLower(c.Text))
		case "updated", "author":
			return ix.ageNode(c.Field, c.Text)
		case "repo":
			// A Union chooses the artifacts; within one it filters nothing.
			if positive {
				return allNode{}
			}
			return nil
		case "topic":
			topic := strings.TrimSuffix(strings.Trim(c.Text, "/"), ".md")
			return anyNode{facetNode(artifact.FacetTopic(topic)), expandNode{fields: []string{artifact.FieldFacet}, prefix: artifact.FacetTopic(topic) + "/"}}
		default:
			if knowledge.IsFilter(c.Field) {
				return facetNode(artifact.FacetMeta(c.Field, c.Text))
			}
		}
	case syntax.Any:
		// Members are alternatives: their phrases are not all required.
		sub := &plan{terms: pl.terms}
		var ns anyNode
		for _, s := range c.Sub {
			if n := ix.clauseNode(s, an, sub); n != nil {
				ns = append(ns, n)
			}
		}
		pl.prefixes = append(pl.prefixes, sub.prefixes...)
		pl.preferred = append(pl.preferred, sub.preferred...)
		var group []string
		for t := range sub.searched {
			group = append(group, t)
		}
		pl.alternatives = append(append(pl.alternatives, group), sub.alternatives...)
		if len(ns) == 0 {
			return nil
		}
		return ns
	}
	return nil
}

// facetNode matches a facet term without scoring.
func facetNode(term string) node {
	return termNode{field: artifact.FieldFacet, term: term}
}

// scopeNode matches a scope and, for directory scopes, the scopes below.
func scopeNode(scope string) node {
	scope = normalizeScope(scope)
	ns := anyNode{facetNode(artifact.FacetScope(scope))}
	if dir, ok := knowledge.ScopeDir(scope); ok && dir != "" {
		ns = append(ns, expandNode{fields: []string{artifact.FieldFacet}, prefix: artifact.FacetScope(scope) + "/"})
	}
	return ns
}

func (r Ranking) boost(field string) float64 {
	if b, ok := r.Boosts[field]; ok {
		return b
	}
	return 1
}

// preferredHeld counts the preferred phrases a chunk holds.
func (pl *plan) preferredHeld(body []byte, title, heading string, an *artifact.Analyzer) int {
	if len(pl.preferred) == 0 {
		return 0
	}
	texts := [][]string{analyzePhrase(string(body), an), analyzePhrase(title, an), analyzePhrase(heading, an)}
	n := 0
	for _, p := range pl.preferred {
		for _, t := range texts {
			if containsRun(t, p) {
				n++
				break
			}
		}
	}
	return n
}

// phrasesMatch reports whether a chunk holds every required phrase and none
// of the excluded ones, in its body, title or heading.
func (pl *plan) phrasesMatch(body []byte, title, heading string, an *artifact.Analyzer) bool {
	if len(pl.phrases) == 0 && len(pl.notPhrases) == 0 {
		return true
	}
	texts := [][]string{analyzePhrase(string(body), an), analyzePhrase(title, an), analyzePhrase(heading, an)}
	holds := func(phrase []string) bool {
		for _, t := range texts {
			if containsRun(t, phrase) {
				return true
			}
		}
		return false
	}
	for _, p := range pl.phrases {
		if !holds(p) {
			return false
		}
	}
	for _, p := range pl.notPhrases {
		if holds(p) {
			return false
		}
	}
	return true
}

// containsRun reports whether run occurs in terms as consecutive items.
func containsRun(terms, run []string) bool {
	for i := 0; i+len(run) <= len(terms); i++ {
		if slices.Equal(terms[i:i+len(run)], run) {
			return true
		}
	}
	return false
}

// statusNode matches the documents of a status: active (neither draft,
// deprecated nor superseded), draft, deprecated, or superseded (by its own
// status or by another document).
func (ix *Index) statusNode(status string) node {
	m := ix.Manifest
	var paths anyNode
	add := func(p string) { paths = append(paths, termNode{field: artifact.FieldPath, term: p}) }
	for p, s := range m.Statuses {
		if s == status || status == "active" {
			add(p)
		}
	}
	for p, by := range m.Retired {
		if status == "superseded" && by != "" || status == "active" {
			add(p)
		}
	}
	if status == "active" {
		return boolNode{must: []node{allNode{}}, mustNot: []node{paths}}
	}
	if len(paths) == 0 {
		return noneNode{}
	}
	return paths
}
