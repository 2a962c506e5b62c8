package kbccli

import (
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
