package cli

import (
	"strings"
	"testing"
	"time"
)

// Off a terminal, a line every LogInterval with the rate and the time
// left; nothing for work done sooner, nothing once done.
func TestProgressLogLines(t *testing.T) {
	var b strings.Builder
	p := NewProgress(&Streams{Err: &b}, "embedding")
	clock := time.Unix(0, 0)
	p.now = func() time.Time { return clock }
	p.Update(0, 1000)
	for done := 1; done <= 1000; done++ {
		clock = clock.Add(100 * time.Millisecond) // ten a second
		p.Update(done, 1000)
	}
	p.Done()
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 9 {
		t.Fatalf("%d lines over 100 s, want one every 10 s but the last:\n%s", len(lines), b.String())
	}
	if lines[0] != "embedding: 100/1000, 10.0 a second, about 1m30s left" {
		t.Errorf("first line %q", lines[0])
	}
	if strings.Contains(b.String(), "\x1b") || strings.Contains(b.String(), "\r") {
		t.Errorf("terminal controls in a log: %q", b.String())
	}
	b.Reset()
	q := NewProgress(&Streams{Err: &b}, "compiling")
	q.Update(5, 10)
	q.Update(10, 10)
	if b.Len() != 0 {
		t.Errorf("quick work printed %q", b.String())
	}
}
