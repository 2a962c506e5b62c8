package reader

import (
	"fmt"
	"sync"
	"time"

	"github.com/kbqdev/kbq/internal/usage"
	"github.com/kbqdev/kbq/query"
	"github.com/kbqdev/kbq/query/documents"
)

// Usage appends the documents kbq hands out to the usage log of the
// artifact they came from. It never fails a command: when the log cannot
// be written it says so once, through its note function, and stops
// trying.
type Usage struct {
	getenv func(string) string
	note   func(string)
	mu     sync.Mutex
	logs   map[string]*usage.Log // by artifact directory
	broken bool                  // the log cannot be written
	noted  bool                  // a problem was reported

	// With Background, Record hands its events to queue, which a
	// goroutine of its own appends; drained is closed once it has
	// appended the last. qmu keeps Close from closing queue under a send.
	qmu     sync.RWMutex
	queue   chan pending
	drained chan struct{}
}

// pending is what a Record handed to the background.
type pending struct {
	dir    string
	events []usage.Event
}

// NewUsage returns a recorder reading the environment through getenv
// and telling note its one complaint.
func NewUsage(getenv func(string) string, note func(string)) *Usage {
	return &Usage{getenv: getenv, note: note, logs: map[string]*usage.Log{}}
}

// Background makes Record return at once and the records be appended
// by a goroutine of their own, those of many calls in one write: for the
// servers, whose answers then do not wait on the log (nor on the
// compaction that now and then reads and rewrites it whole). Close
// appends what is left and stops it.
func (u *Usage) Background() {
	if u == nil {
		return
	}
	u.qmu.Lock()
	defer u.qmu.Unlock()
	if u.queue != nil {
		return
	}
	u.queue, u.drained = make(chan pending, 256), make(chan struct{})
	go u.drain(u.queue, u.drained)
}

// Close appends what Background was handed and returns once it is
// written; Record appends at once after it.
func (u *Usage) Close() {
	if u == nil {
		return
	}
	u.qmu.Lock()
	queue, drained := u.queue, u.drained
	u.queue = nil
	u.qmu.Unlock()
	if queue != nil {
		close(queue)
		<-drained
	}
}

// drain appends what queue brings, everything waiting in it together.
func (u *Usage) drain(queue <-chan pending, drained chan<- struct{}) {
	defer close(drained)
	for p := range queue {
		batch := []pending{p}
	more:
		for {
			select {
			case p, ok := <-queue:
				if !ok {
					break more
				}
				batch = append(batch, p)
			default:
				break more
			}
		}
		// One write per artifact, in the order the records came.
		for i, p := range batch {
			if p.dir == "" {
				continue
			}
			events := p.events
			for j := i + 1; j < len(batch); j++ {
				if batch[j].dir == p.dir {
					events = append(events, batch[j].events...)
					batch[j].dir = ""
				}
			}
			u.write(p.dir, events)
		}
	}
}

// Record appends events for the artifact in dir, or hands them to the
// background (Background).
func (u *Usage) Record(dir string, events []usage.Event) {
	if u == nil || len(events) == 0 || dir == "" {
		return
	}
	u.qmu.RLock()
	if u.queue != nil {
		// Stamped now: the background may write them a little later.
		now := time.Now()
		stamped := make([]usage.Event, len(events))
		for i, e := range events {
			stamped[i] = e
			if e.Time.IsZero() {
				stamped[i].Time = now
			}
		}
		u.queue <- pending{dir, stamped}
		u.qmu.RUnlock()
		return
	}
	u.qmu.RUnlock()
	u.write(dir, events)
}

// write appends events for the artifact in dir.
func (u *Usage) write(dir string, events []usage.Event) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.broken {
		return
	}
	log, ok := u.logs[dir]
	if !ok {
		var err error
		if log, err = usage.Open(dir, u.getenv); err != nil {
			u.fail(err)
			return
		}
		u.logs[dir] = log
	}
	if err := log.Record(events); err != nil {
		u.fail(err)
	}
}

func (u *Usage) fail(err error) {
	u.broken = true
	u.noteOnce(fmt.Sprintf("usage is not being recorded (%v); set KBQ_USAGE=off to stop recording", err))
}

func (u *Usage) noteOnce(msg string) {
	if !u.noted {
		u.noted = true
		u.note(msg)
	}
}

// Recent counts each document's uses within the last 30 days, from the
// usage log of the artifact in dir; nil when there is no log or it cannot
// be read (said once).
func (u *Usage) Recent(dir string) map[string]int {
	if u == nil {
		return nil
	}
	sum, _, err := usage.ReadFile(dir, u.getenv)
	if err != nil {
		u.mu.Lock()
		u.noteOnce(fmt.Sprintf("the usage log cannot be read (%v): the knowledge index ranks by importance", err))
		u.mu.Unlock()
		return nil
	}
	out := make(map[string]int, len(sum.Docs))
	for p, d := range sum.Docs {
		out[p] = d.Recent
	}
	return out
}

// HotDefault is how many documents the knowledge index of kbq context
// lists by default.
const HotDefault = 5

// SearchEvents are the documents of a search's results in ix, once each.
func SearchEvents(ix *query.Index, via, q string, results []query.Result) []usage.Event {
	blobs := ix.Blobs(results)
	var out []usage.Event
	seen := map[string]bool{}
	for i, r := range results {
		if !seen[r.Path] {
			seen[r.Path] = true
			out = append(out, usage.Event{Via: via, Op: usage.OpSearch, Path: r.Path, Blob: blobs[i], Query: q})
		}
	}
	return out
}

// GetEvents is the document a get returned.
func GetEvents(via string, d *documents.Document) []usage.Event {
	return []usage.Event{{Via: via, Op: usage.OpGet, Path: d.Path, Blob: d.Blob}}
}
