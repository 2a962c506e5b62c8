package kbccli

import (
	"math"
	"runtime/debug"
	"testing"

	"github.com/kbqdev/kbq/internal/cli"
)

// A build from nothing lets the heap grow to three times what it holds,
// an incremental build five times, and GOGC overrides both.
func TestBuildsPaceTheCollector(t *testing.T) {
	old := debug.SetGCPercent(100)
	defer debug.SetGCPercent(old)
	unset := &cli.Streams{Getenv: func(string) string { return "" }}
	for _, c := range []struct {
		full bool
		want int
	}{{true, 200}, {false, 400}} {
		paceBuildGC(unset, c.full)
		if got := debug.SetGCPercent(100); got != c.want {
			t.Errorf("full %v: pace %d, want %d", c.full, got, c.want)
		}
	}
	paceBuildGC(&cli.Streams{Getenv: func(k string) string { return map[string]string{"GOGC": "50"}[k] }}, true)
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("with GOGC set, pace %d, want it left alone (100)", got)
	}
}

// A build grows its heap at once in proportion to its documents, under
// two thirds of the memory limit, and not at all when small.
func TestHeapToGrow(t *testing.T) {
	const limit = 240 << 20
	for _, c := range []struct {
		documents int
		limit     int64
		want      int
	}{
		{3088, limit, 3088 * heapPerDocument},
		{92640, limit, limit / 3 * 2},
		{10, limit, 0},
		{600, limit, 0},
		{1 << 20, math.MaxInt64, 1 << 30},
		{3088, 30 << 20, 0},
	} {
		if got := heapToGrow(c.documents, c.limit); got != c.want {
			t.Errorf("heapToGrow(%d, %d) = %d, want %d", c.documents, c.limit, got, c.want)
		}
	}
}
