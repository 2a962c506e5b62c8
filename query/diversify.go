package query

import (
	"math"

	"github.com/kbqdev/kbq/artifact"
)

// Diversifying the top results: an answer that spans two documents (a
// blocker noted in one session, its fix in a later one) needs both near
// the top, not five near-copies of the first. The results a search by
// meaning ranks (semantic and hybrid) are re-ordered by maximal marginal
// relevance over their vectors: each next result is the one whose
// relevance, less its likeness to those already chosen, is highest; and a
// near-copy of a chosen result goes after every other candidate. The
// figures are in docs/benchmarks.md ("Both halves of an answer").
const (
	// nearCopy is the cosine at which a result repeats one chosen before.
	nearCopy = 0.95
	// diversifyDepth is how many candidates a result is chosen among, as
	// a multiple of the results asked for (and at least minDiversify).
	diversifyDepth = 3
	minDiversify   = 20
)

// diversify returns the first n of ranked (best first) re-ordered by
// maximal marginal relevance at diversity, their scores kept. A result
// without a vector is never penalised, nor makes others look alike.
func diversify(ranked []Result, n int, diversity float64) []Result {
	return diversifyWith(ranked, n, diversity, Result.vector)
}

// diversifyWith is diversify with the vectors of vectorOf.
func diversifyWith(ranked []Result, n int, diversity float64, vectorOf func(Result) []float32) []Result {
	if n <= 1 || len(ranked) <= 1 {
		return ranked[:min(n, len(ranked))]
	}
	cands := ranked[:min(len(ranked), max(diversifyDepth*n, minDiversify))]
	vecs := make([][]float32, len(cands))
	norms := make([]float64, len(cands)) // each vector's squared norm
	models := make([]*Index, len(cands)) // a vector's index, whose model made it
	any := false
	for i := range cands {
		vecs[i], models[i] = vectorOf(cands[i]), cands[i].ix
		norms[i] = artifact.Dot64(vecs[i], vecs[i])
		any = any || vecs[i] != nil
	}
	if !any {
		return ranked[:min(n, len(ranked))]
	}
	top := cands[0].Score
	// likeness[i] is candidate i's greatest cosine with a chosen result.
	likeness := make([]float64, len(cands))
	taken := make([]bool, len(cands))
	out := make([]Result, 0, n)
	for len(out) < n {
		best, bestMMR := -1, math.Inf(-1)
		for i := range cands { // by index: a Result is some 400 bytes to copy
			if taken[i] || likeness[i] >= nearCopy {
				continue
			}
			rel := 1.0
			if top > 0 {
				rel = cands[i].Score / top
			}
			if m := (1-diversity)*rel - diversity*likeness[i]; m > bestMMR {
				best, bestMMR = i, m
			}
		}
		if best < 0 {
			break
		}
		taken[best] = true
		out = append(out, cands[best])
		// A superseded or deprecated result, which the search leaves out
		// after, makes none look alike: its successor is a near-copy.
		if v := vecs[best]; v != nil && len(out) < n && !cands[best].retired() {
			for i, w := range vecs {
				if !taken[i] && w != nil && oneModel(models[best], models[i]) {
					likeness[i] = max(likeness[i], artifact.CosineOfNorms(v, w, norms[best], norms[i]))
				}
			}
		}
	}
	// Near-copies, then the candidates past the depth, fill what is left.
	for i := range cands {
		if len(out) < n && !taken[i] {
			out = append(out, cands[i])
		}
	}
	for _, r := range ranked[len(cands):] {
		if len(out) == n {
			break
		}
		out = append(out, r)
	}
	return out
}

// vector is the stored vector of r's chunk, nil when it has none.
func (r Result) vector() []float32 {
	if r.ix == nil {
		return nil
	}
	vecs, err := r.ix.vectors()
	if err != nil {
		return nil
	}
	rows, err := r.ix.rowMap(vecs)
	if err != nil {
		return nil
	}
	row, ok := rows.rowOf(r.doc)
	if !ok {
		return nil
	}
	return vecs.AppendVector(make([]float32, 0, vecs.Dims), row)
}

// retired reports whether r's document is superseded or deprecated.
func (r Result) retired() bool {
	if r.ix == nil {
		return false
	}
	_, gone := r.ix.Manifest.Retired[r.Path]
	return gone
}

// oneModel reports whether the vectors of a and b were made by one model.
func oneModel(a, b *Index) bool {
	return a == b || a.Manifest.Embeddings != nil && b.Manifest.Embeddings != nil && a.Manifest.Embeddings.Same(*b.Manifest.Embeddings)
}
