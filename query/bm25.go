package query

import (
	"math"

	"github.com/kbqdev/kbq/artifact"
	"github.com/kbqdev/kbq/artifact/postings"
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

// avgLength returns a field's average length in terms.
func avgLength(stats artifact.FieldStats) float64 {
	if stats.Docs == 0 {
		return 1
	}
	return float64(stats.Tokens) / float64(stats.Docs)
}

// fieldTF returns a term's length-normalized frequency in one field of dl
// terms, before weighting and saturation: freq / (1 - b + b·dl/avgdl),
// with base = 1 - b and norm = b/avgdl worked out once per term (the
// field's average length avgdl), leaving one division a field of a chunk.
func fieldTF(freq, dl int, base, norm float64) float64 {
	return float64(freq) / (base + norm*float64(dl))
}

// saturate returns the BM25 saturation of a combined term frequency.
func saturate(tf, k1 float64) float64 {
	return tf / (k1 + tf)
}

// termScorer computes a term's BM25F frequency in chunks.
type termScorer struct {
	in   [postings.Fields]bool
	w    [postings.Fields]float64
	norm [postings.Fields]float64 // b over the field's average length (fieldTF)
	base float64                  // 1 - b
}

func (ev *eval) termScorer(n textNode) termScorer {
	b := ev.ranking.B
	sc := termScorer{in: n.in, w: n.weights, base: 1 - b}
	for i, f := range artifact.TextFields {
		sc.norm[i] = b / avgLength(ev.stats[f])
	}
	return sc
}

// tf returns the term's combined frequency in chunk doc of r, given its
// frequency in each field, and whether the chunk holds it in a field the
// term is searched in.
func (sc *termScorer) tf(freqs *[postings.Fields]uint32, r *postings.Reader, doc uint32) (float64, bool) {
	tf, ok := 0.0, false
	for f, fr := range freqs {
		if fr == 0 || !sc.in[f] {
			continue
		}
		ok = true
		if sc.w[f] != 0 {
			tf += sc.w[f] * fieldTF(int(fr), int(r.Length(doc, f)), sc.base, sc.norm[f])
		}
	}
	return tf, ok
}

// bound returns the largest combined frequency a chunk within bound b can
// have: in each field, the most any of the field's pairs gives. It holds for weights ≥ 0 and 0 ≤ b ≤ 1, where more occurrences and
// shorter fields never lower the frequency.
func (sc *termScorer) bound(b *postings.Block) float64 {
	tf := 0.0
	for f, n := range b.N {
		if n == 0 || !sc.in[f] || sc.w[f] == 0 {
			continue
		}
		best := 0.0
		for _, p := range b.Pairs[f][:n] {
			best = max(best, fieldTF(int(p.Freq), int(p.Len), sc.base, sc.norm[f]))
		}
		tf += sc.w[f] * best
	}
	return tf
}
