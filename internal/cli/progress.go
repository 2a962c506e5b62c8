package cli

import (
	"fmt"
	"time"
)

// Progress reports the progress of long work on Err. On a terminal it
// shows done/total at most ten times a second, on one line that Done
// clears. Elsewhere (a CI log) it prints a line at most every
// LogInterval, with the rate and the time left, so a log never stays
// blank for minutes; work done sooner prints nothing.
type Progress struct {
	s     *Streams
	label string
	last  time.Time
	start time.Time
	shown bool
	now   func() time.Time
}

// LogInterval is how often a progress line is printed when Err is not a
// terminal.
var LogInterval = 10 * time.Second

// NewProgress returns a progress reporter labelled label.
func NewProgress(s *Streams, label string) *Progress {
	return &Progress{s: s, label: label, now: time.Now}
}

// Update shows done of total.
func (p *Progress) Update(done, total int) {
	now := p.now()
	if p.start.IsZero() {
		p.start = now
		if !p.s.ErrTTY {
			p.last = now // the first line waits a whole interval
		}
	}
	if !p.s.ErrTTY {
		if done >= total || now.Sub(p.last) < LogInterval {
			return
		}
		p.last = now
		line := fmt.Sprintf("%s: %d/%d", p.label, done, total)
		if elapsed := now.Sub(p.start).Seconds(); done > 0 && elapsed > 0 {
			rate := float64(done) / elapsed
			left := time.Duration(float64(total-done) / rate * float64(time.Second)).Round(time.Second)
			line += fmt.Sprintf(", %.1f a second, about %s left", rate, left)
		}
		fmt.Fprintln(p.s.Err, line)
		return
	}
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
