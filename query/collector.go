package query

import (
	"container/heap"
	"math"
	"slices"

	"github.com/bits-and-blooms/bitset"
)

// scoredDoc is a matching chunk and its score.
type scoredDoc struct {
	doc   uint64
	score float64
}

// topScored returns the k best-scoring chunks of set, their scores
// multiplied by their factor, and every chunk tied with the k-th, in no
// particular order. Keeping the ties lets the caller
// break them by path, so that results never depend on chunk numbering,
// which differs between an incremental and a full build.
func topScored(set *bitset.BitSet, scores []float64, k int, factor func(uint64) float64) []scoredDoc {
	col := topCollector{k: k}
	for i, ok := set.NextSet(0); ok; i, ok = set.NextSet(i + 1) {
		score := 0.0 // nothing scored: every chunk ties
		if scores != nil {
			score = scores[i] * factor(uint64(i))
		}
		col.add(scoredDoc{doc: uint64(i), score: score})
	}
	return col.result()
}

// topCollector keeps the k best chunks offered, and those tied with the
// k-th.
type topCollector struct {
	k    int
	hits docHeap
	// ties are the chunks scoring tieScore, the k-th best score: a query
	// that ties every chunk (a lone *) keeps them all, four bytes each.
	ties     []uint32
	tieScore float64
}

// full reports whether k chunks are kept: only those scoring at least
// threshold are kept from now on.
func (c *topCollector) full() bool { return len(c.hits) >= c.k }

// threshold returns the score a chunk needs to be kept, -Inf until full.
func (c *topCollector) threshold() float64 {
	if !c.full() {
		return math.Inf(-1)
	}
	return c.hits[0].score
}

func (c *topCollector) add(d scoredDoc) {
	if len(c.hits) < c.k {
		heap.Push(&c.hits, d)
		return
	}
	low := c.hits[0].score
	switch {
	case d.score < low:
	case d.score == low:
		c.tie(d)
	default:
		heap.Push(&c.hits, d)
		out := heap.Pop(&c.hits).(scoredDoc)
		if out.score == c.hits[0].score {
			c.tie(out)
		} else {
			c.ties = c.ties[:0]
		}
	}
}

func (c *topCollector) tie(d scoredDoc) {
	if len(c.ties) == 0 || d.score != c.tieScore {
		c.ties, c.tieScore = c.ties[:0], d.score
	}
	c.ties = append(c.ties, uint32(d.doc))
}

// result returns the chunks kept, in no particular order.
func (c *topCollector) result() []scoredDoc {
	out := slices.Grow(c.hits, len(c.ties))
	for _, doc := range c.ties {
		out = append(out, scoredDoc{doc: uint64(doc), score: c.tieScore})
	}
	return out
}

// docHeap is a min-heap of chunks by score.
type docHeap []scoredDoc

func (h docHeap) Len() int           { return len(h) }
func (h docHeap) Less(i, j int) bool { return h[i].score < h[j].score }
func (h docHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *docHeap) Push(x any)        { *h = append(*h, x.(scoredDoc)) }
func (h *docHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
