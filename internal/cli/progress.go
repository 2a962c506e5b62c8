package cli

import (
	"fmt"
	"time"
)

// Progress reports the progress of long work on Err when it is a terminal,
// at most ten times a second, on one line that Done clears.
type Progress struct {
	s     *Streams
	label string
	last  time.Time
	shown bool
}

// NewProgress returns a progress reporter labelled label.
func NewProgress(s *Streams, label string) *Progress {
	return &Progress{s: s, label: label}
}

// Update shows done of total.
func (p *Progress) Update(done, total int) {
	if !p.s.ErrTTY {
		return
	}
	now := time.Now()
	if done < total && now.Sub(p.last) < 100*time.Millisecond {
		return
	}
	p.last = now
	p.shown = true
	fmt.Fprintf(p.s.Err, "\r\x1b[K%s %d/%d", p.label, done, total)
}

// Done clears the progress line.
func (p *Progress) Done() {
	if p.shown {
		fmt.Fprint(p.s.Err, "\r\x1b[K")
		p.shown = false
	}
}
