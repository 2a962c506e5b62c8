package query

import (
	"math"

	"github.com/kbqdev/kbq/artifact"
)

// Chunks are ranked with BM25F (Robertson, Zaragoza and Taylor, "Simple
// BM25 extension to multiple weighted fields", 2004). A term's frequency
// in each text field is normalized by that field's length and weighted by
// the field's boost; the weighted sum is saturated once:
//
//	tf    = Σ_f  w_f · freq_f / (1 - b + b · len_f / avglen_f)
//	score = idf · tf / (k1 + tf)
//	idf   = ln(1 + (N - n + 0.5) / (n + 0.5))
//
// where N is the number of live chunks and n the number holding the term
// in any text field. Summing a separate BM25 score per field instead
// saturates each field on its own, which overrates a term that happens to
// be in a short title. (Bluge's own BM25 also misplaces a parenthesis in
// the idf, ln(1 + (N-n) + 0.5/(n+0.5)), which makes a term in 90% of
// chunks weigh almost as much as a rare one.)
//
// N and the average field lengths come from the manifest, which counts
// live chunks only; Bluge's collection statistics also count chunks an
// incremental build deleted, so an incremental and a full build of the
// same commit would score differently.

// IDF returns the inverse document frequency of a term in n of N chunks.
func IDF(n, N uint64) float64 {
	if n > N {
		N = n
	}
	return math.Log(1 + (float64(N)-float64(n)+0.5)/(float64(n)+0.5))
}

// fieldTF returns a term's length-normalized frequency in one field of dl
// terms, before weighting and saturation.
func fieldTF(freq, dl int, stats artifact.FieldStats, b float64) float64 {
	avgdl := 1.0
	if stats.Docs > 0 {
		avgdl = float64(stats.Tokens) / float64(stats.Docs)
	}
	return float64(freq) / (1 - b + b*float64(dl)/avgdl)
}

// saturate returns the BM25 saturation of a combined term frequency.
func saturate(tf, k1 float64) float64 {
	return tf / (k1 + tf)
}
