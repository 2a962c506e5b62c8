package query

import "github.com/kbqdev/kbq/artifact"

// SetExhaustive makes ix score every match term at a time, the reference
// top-k evaluation is compared with.
func SetExhaustive(ix *Index, on bool) { ix.exhaustive = on }

// UsesTopK reports whether a search for q would use top-k evaluation.
func UsesTopK(ix *Index, q string) bool {
	pl := ix.plan(Parse(q), artifact.NewAnalyzer(ix.Manifest.Analysis))
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
