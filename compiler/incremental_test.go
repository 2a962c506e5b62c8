package compiler

import "testing"

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
