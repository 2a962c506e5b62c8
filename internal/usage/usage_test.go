package usage

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

func testLog(t *testing.T, vars map[string]string) *Log {
	t.Helper()
	if vars == nil {
		vars = map[string]string{}
	}
	if _, ok := vars["XDG_STATE_HOME"]; !ok {
		vars["XDG_STATE_HOME"] = t.TempDir()
	}
	l, err := Open(filepath.Join(t.TempDir(), "repo", ".kbq"), env(vars))
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestRecordAndRead(t *testing.T) {
	l := testLog(t, nil)
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	l.now = func() time.Time { return now }
	old := now.Add(-40 * 24 * time.Hour)
	events := []Event{
		{Via: ViaCLI, Op: OpSearch, Path: ".kb/a.md", Blob: "b1", Query: "secret question", Time: old},
		{Via: ViaMCP, Op: OpGet, Path: ".kb/a.md", Blob: "b2"},
		{Via: ViaHTTP, Op: OpSearch, Path: ".kb/b.md", Blob: "b3"},
	}
	if err := l.Record(events); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(l.path)
	if bytes.Contains(data, []byte("secret question")) {
		t.Error("query text recorded without KBQ_USAGE_QUERIES=1")
	}
	if !strings.Contains(l.path, filepath.Join("kbq", "usage", "repo-")) {
		t.Errorf("log at %s, want under kbq/usage/, named after the repository", l.path)
	}
	sum, err := l.Read()
	if err != nil {
		t.Fatal(err)
	}
	a, b := sum.Docs[".kb/a.md"], sum.Docs[".kb/b.md"]
	if a == nil || a.Count != 2 || a.Recent != 1 || a.Blob != "b2" || !a.Last.Equal(now) {
		t.Errorf(".kb/a.md: %+v, want 2 uses, 1 recent, blob b2, last %v", a, now)
	}
	if b == nil || b.Count != 1 || b.Recent != 1 {
		t.Errorf(".kb/b.md: %+v", b)
	}
	if !sum.Since.Equal(old) {
		t.Errorf("since %v, want %v", sum.Since, old)
	}

	q := testLog(t, map[string]string{"KBQ_USAGE_QUERIES": "1"})
	q.Record([]Event{{Via: ViaCLI, Op: OpSearch, Path: ".kb/a.md", Query: "how do we deploy"}})
	if data, _ := os.ReadFile(q.path); !bytes.Contains(data, []byte("how do we deploy")) {
		t.Error("query text not recorded with KBQ_USAGE_QUERIES=1")
	}
}

func TestOffSwitches(t *testing.T) {
	for _, c := range []struct {
		vars map[string]string
		on   bool
	}{
		{map[string]string{}, true},
		{map[string]string{"KBQ_USAGE": "off"}, false},
		{map[string]string{"CI": "true"}, false},
		{map[string]string{"CI": "true", "KBQ_USAGE": "on"}, true},
	} {
		c.vars["HOME"] = t.TempDir()
		l, err := Open(t.TempDir(), env(c.vars))
		if err != nil || (l != nil) != c.on {
			t.Errorf("%v: log %v, %v; want on=%v", c.vars, l, err, c.on)
		}
	}
	if _, err := Open(t.TempDir(), env(map[string]string{})); err == nil {
		t.Error("no HOME nor XDG_STATE_HOME: no error")
	}
}

// Past its size cap the log becomes one line per document, keeping the
// counts; daily counts older than the window are dropped.
func TestCompaction(t *testing.T) {
	l := testLog(t, nil)
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	l.now = func() time.Time { return now }
	var events []Event
	for i := range 6000 {
		events = append(events, Event{Via: ViaCLI, Op: OpSearch, Path: fmt.Sprintf(".kb/doc%d.md", i%7), Blob: "abc",
			Time: now.Add(-time.Duration(i) * time.Hour)})
	}
	for i := 0; i < len(events); i += 100 {
		if err := l.Record(events[i : i+100]); err != nil {
			t.Fatal(err)
		}
	}
	fi, err := os.Stat(l.path)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(l.path)
	if lines := bytes.Count(data, []byte("\n")); fi.Size() > maxLogBytes || lines >= len(events) {
		t.Errorf("log is %d bytes in %d lines for %d events: not compacted", fi.Size(), lines, len(events))
	}
	sum, err := l.Read()
	if err != nil {
		t.Fatal(err)
	}
	total, recent := 0, 0
	for _, u := range sum.Docs {
		total += u.Count
		recent += u.Recent
	}
	// 6000 hourly events: the last 30 days hold 720 hours (and those of
	// the day at the window's edge).
	if total != 6000 || recent < 720 || recent > 744 {
		t.Errorf("after compaction: %d uses, %d recent; want 6000, about 720", total, recent)
	}
	if len(sum.Docs) != 7 {
		t.Errorf("%d documents, want 7", len(sum.Docs))
	}
}

// Writers in parallel, one of them compacting, lose no record.
func TestConcurrentWriters(t *testing.T) {
	state := t.TempDir()
	dir := filepath.Join(t.TempDir(), ".kbq")
	var wg sync.WaitGroup
	const writers, batches, per = 8, 40, 20
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l, err := Open(dir, env(map[string]string{"XDG_STATE_HOME": state}))
			if err != nil {
				t.Error(err)
				return
			}
			for b := range batches {
				var events []Event
				for i := range per {
					events = append(events, Event{Via: ViaMCP, Op: OpGet, Path: fmt.Sprintf(".kb/w%d-%d.md", w, (b+i)%50),
						Blob: strings.Repeat("f", 40)})
				}
				if err := l.Record(events); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	sum, _, err := ReadFile(dir, env(map[string]string{"XDG_STATE_HOME": state}))
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, u := range sum.Docs {
		total += u.Count
	}
	if total != writers*batches*per || sum.Skipped != 0 {
		t.Errorf("%d uses read (%d lines skipped), want %d", total, sum.Skipped, writers*batches*per)
	}
}

// A record cut short is skipped, and does not swallow the next one.
func TestDamagedLog(t *testing.T) {
	l := testLog(t, nil)
	l.Record([]Event{{Via: ViaCLI, Op: OpGet, Path: ".kb/a.md"}})
	f, err := os.OpenFile(l.path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("garbage\n{\"t\":17000")
	f.Close()
	if err := l.Record([]Event{{Via: ViaCLI, Op: OpGet, Path: ".kb/b.md"}}); err != nil {
		t.Fatal(err)
	}
	sum, err := l.Read()
	if err != nil {
		t.Fatal(err)
	}
	if sum.Skipped != 2 || sum.Docs[".kb/a.md"] == nil || sum.Docs[".kb/b.md"] == nil {
		t.Errorf("read %d documents, skipped %d lines; want a.md and b.md, 2 skipped", len(sum.Docs), sum.Skipped)
	}
}

// A log that cannot be written is an error for the caller to report.
func TestUnwritableLog(t *testing.T) {
	blocker := filepath.Join(t.TempDir(), "file")
	os.WriteFile(blocker, nil, 0o644)
	l, err := Open(t.TempDir(), env(map[string]string{"XDG_STATE_HOME": blocker}))
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Record([]Event{{Via: ViaCLI, Op: OpGet, Path: ".kb/a.md"}}); err == nil {
		t.Error("recording under a regular file succeeded")
	}
}
