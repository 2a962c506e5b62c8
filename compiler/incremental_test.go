package compiler

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/kbqdev/kbq/artifact"
)

func TestRebuildPolicy(t *testing.T) {
	tests := []struct {
		segs          int
		live, deleted uint64
		want          bool
	}{
		{1, 100, 0, false},
		{2, 100, 30, false},    // 23% deleted
		{2, 100, 40, true},     // 29% deleted
		{65, 100, 0, true},     // one segment of a full build, 64 added
		{64, 100, 0, false},    // 63 added
		{5, 229080, 10, false}, // a large index: 4 segments built, one added
		{4 + 64, 229080, 10, true},
	}
	for _, tt := range tests {
		if got := rebuild(tt.segs, tt.live, tt.deleted) != ""; got != tt.want {
			t.Errorf("rebuild(%d segments, %d live, %d deleted) = %v, want %v", tt.segs, tt.live, tt.deleted, got, tt.want)
		}
	}
}

// mergeDocuments merges in place or into new memory, always in path order.
func TestMergeDocuments(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 500 {
		var kept, fresh, all []artifact.Document
		for i := range rng.IntN(40) {
			d := artifact.Document{Path: fmt.Sprintf("p%03d", i)}
			all = append(all, d)
			if rng.IntN(3) == 0 {
				fresh = append(fresh, d)
			} else {
				kept = append(kept, d)
			}
		}
		// Room at the end of kept, or none.
		kept = slices.Grow(kept, rng.IntN(len(fresh)+2))
		got := mergeDocuments(kept, fresh)
		if !slices.EqualFunc(got, all, func(a, b artifact.Document) bool { return a.Path == b.Path }) {
			t.Fatalf("mergeDocuments(%d kept, %d fresh) = %v, want %v", len(kept), len(fresh), got, all)
		}
	}
}
