package query

import (
	"container/heap"

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
	var hits docHeap
	var ties []scoredDoc
	for i, ok := set.NextSet(0); ok; i, ok = set.NextSet(i + 1) {
		d := scoredDoc{doc: uint64(i), score: scores[i] * factor(uint64(i))}
		if len(hits) < k {
			heap.Push(&hits, d)
			continue
		}
		low := hits[0].score
		switch {
		case d.score < low:
		case d.score == low:
			ties = append(ties, d)
		default:
			heap.Push(&hits, d)
			out := heap.Pop(&hits).(scoredDoc)
			if out.score == hits[0].score {
				ties = append(ties, out)
			} else {
				ties = ties[:0]
			}
		}
	}
	return append(hits, ties...)
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
