package query

import (
	"math"

	"github.com/kbqdev/kbq/artifact"
)

// BM25 is Okapi BM25 as Lucene computes it:
//
//	score = boost * idf * freq / (freq + k1 * (1 - b + b * dl / avgdl))
//	idf   = ln(1 + (N - n + 0.5) / (n + 0.5))
//
// where N is the number of chunks with the field and n the number holding
// the term. (Bluge's own BM25 misplaces a parenthesis in the idf,
// ln(1 + (N-n) + 0.5/(n+0.5)), which makes a term in 90% of documents weigh
// almost as much as a rare one.)
//
// N and the average field length come from the manifest, which counts live
// chunks only; Bluge's collection statistics also count chunks an
// incremental build deleted, so an incremental and a full build of the same
// commit would score differently.
type BM25 struct {
	K1, B float64
	Stats artifact.FieldStats
}

// IDF returns the inverse document frequency of a term in n of N chunks.
func IDF(n, N uint64) float64 {
	if n > N {
		N = n
	}
	return math.Log(1 + (float64(N)-float64(n)+0.5)/(float64(n)+0.5))
}

// TF returns the saturated term frequency of a term occurring freq times
// in a field of dl terms.
func (s BM25) TF(freq, dl int) float64 {
	avgdl := 1.0
	if s.Stats.Docs > 0 {
		avgdl = float64(s.Stats.Tokens) / float64(s.Stats.Docs)
	}
	f := float64(freq)
	return f / (f + s.K1*(1-s.B+s.B*float64(dl)/avgdl))
}
