package query

import (
	"context"

	"github.com/kbqdev/kbq/artifact"
	"github.com/kbqdev/kbq/query/syntax"
)

// SetExhaustive makes ix score every match term at a time, the reference
// top-k evaluation is compared with.
func SetExhaustive(ix *Index, on bool) { ix.exhaustive = on }

// UsesTopK reports whether a search for q would use top-k evaluation.
func UsesTopK(ix *Index, q string) bool {
	pl := ix.plan(syntax.Parse(q), artifact.NewAnalyzer(ix.Manifest.Analysis))
	if pl.root == nil {
		return false
	}
	ev := ix.engine.newEval(ix.ranking, ix.Manifest.Fields, ix.Manifest.Counts.Chunks)
	_, ok, err := ev.compileTop(pl.root)
	return ok && err == nil
}

// SetExactTotals sets how many matches are counted before chunks are
// skipped, and returns a function that restores it.
func SetExactTotals(n int) func() {
	old := exactTotals
	exactTotals = n
	return func() { exactTotals = old }
}

// SetSemanticCandidates sets how many chunks the vectors' bits choose
// for a semantic search, and returns a function that restores it.
func SetSemanticCandidates(n int) func() {
	old := semanticCandidates
	semanticCandidates = n
	return func() { semanticCandidates = old }
}

// Cost is what one lexical search spent of the query's limits.
type Cost struct {
	Clauses, Terms                 int
	Expanded, ExpandedDF, Scanned  int
	MaxClauses, MaxTerms           int
	MaxExpanded, MaxDF, MaxScanned int
	Notes                          []string
}

// SearchCost runs q as a lexical search does and reports its cost.
func SearchCost(ix *Index, q string) (Cost, error) {
	parsed := syntax.Parse(q)
	pl := ix.plan(parsed, artifact.NewAnalyzer(ix.Manifest.Analysis))
	c := Cost{Terms: len(pl.searched), MaxClauses: maxClauses, MaxTerms: maxTerms,
		MaxExpanded: maxExpandedTerms, MaxDF: maxExpandedPostings, MaxScanned: maxScannedTotal}
	bounded, _ := bound(parsed)
	for _, cl := range bounded.Clauses {
		if cl.Occur != syntax.Should || cl.Kind != syntax.Word {
			c.Clauses += 1 + len(cl.Sub)
		}
	}
	if pl.root == nil {
		return c, nil
	}
	top, _, ev, err := ix.topK(context.Background(), pl.root, true, nil)
	if err != nil {
		return c, err
	}
	if _, err := top(10); err != nil {
		return c, err
	}
	c.Expanded, c.ExpandedDF, c.Scanned = ev.expanded, ev.expandedDF, ev.scanned
	c.Notes = append(pl.notes, ev.notes...)
	return c, nil
}

// SetScanLimit sets how many dictionary entries a query's expansions may
// read, and returns a function that restores it.
func SetScanLimit(n int) func() {
	old := maxScannedTotal
	maxScannedTotal = n
	return func() { maxScannedTotal = old }
}

// FeedbackQuery is the query of the feedback channel of a hybrid search
// whose first result's text is text.
func FeedbackQuery(ix *Index, q, text string) string { return ix.feedbackQuery(q, text) }

// SetHybridWords makes the semantic channel of hybrid searches wait for
// the words' results (await) or never take them, and returns a function
// that restores the default.
func SetHybridWords(await bool) func() {
	hybridWords = wordsIgnored
	if await {
		hybridWords = wordsAwaited
	}
	return func() { hybridWords = wordsWhenReady }
}
