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

// clockedLog is a log of the test's own whose clock stands still.
func clockedLog(t *testing.T) (*Log, time.Time) {
	t.Helper()
	l := testLog(t, nil)
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	l.now = func() time.Time { return now }
	return l, now
}

func TestRecordAndRead(t *testing.T) {
	l, now := clockedLog(t)
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
	l, now := clockedLog(t)
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

// A log whose summary alone passes maxLogBytes (thousands of documents
// used) is compacted again only once it has doubled, not on every record.
func TestCompactionWaitsForTheLogToDouble(t *testing.T) {
	l, now := clockedLog(t)
	var events []Event
	for i := range 4000 {
		events = append(events, Event{Via: ViaCLI, Op: OpSearch, Path: fmt.Sprintf(".kb/reference/area/document-%d.md", i),
			Blob: "0123456789abcdef0123456789abcdef01234567", Time: now})
	}
	if err := l.Record(events); err != nil {
		t.Fatal(err)
	}
	compacted, err := os.Stat(l.path)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(l.path)
	head := fmt.Sprintf("{\"compacted\":%d}\n", compacted.Size())
	if compacted.Size() <= maxLogBytes || !strings.HasPrefix(string(data), head) {
		t.Fatalf("a compacted log of %d bytes starts %q, want %q", compacted.Size(), data[:min(len(data), 40)], head)
	}
	// Records after it are appended to the same file until it has doubled.
	records, before := 0, compacted.Size()
	for ; records < 20000; records++ {
		i := records % len(events)
		if err := l.Record(events[i : i+1]); err != nil {
			t.Fatal(err)
		}
		next, err := os.Stat(l.path)
		if err != nil {
			t.Fatal(err)
		}
		if !os.SameFile(compacted, next) {
			if before+1000 < 2*compacted.Size() {
				t.Fatalf("compacted again at %d bytes, after %d records; the last compaction left %d", before, records, compacted.Size())
			}
			records++
			break
		}
		before = next.Size()
	}
	if now, _ := os.Stat(l.path); os.SameFile(compacted, now) {
		t.Fatalf("not compacted again after %d records", records)
	}
	sum, err := l.Read()
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, u := range sum.Docs {
		total += u.Count
	}
	if total != len(events)+records || len(sum.Docs) != len(events) || sum.Skipped != 0 {
		t.Errorf("read %d uses of %d documents (%d lines skipped), want %d of %d", total, len(sum.Docs), sum.Skipped, len(events)+records, len(events))
	}
}

// The first line of a compacted log counts itself in the size it gives,
// across a change in the number of its digits.
func TestCompactedHead(t *testing.T) {
	for _, n := range []int{0, 1, 80, 84, 85, 86, 983, 984, 985, 9982, 9983, 9984, 1 << 20} {
		head := compactedHead(n)
		want := fmt.Sprintf("{\"compacted\":%d}\n", n+len(head))
		if string(head) != want {
			t.Errorf("compactedHead(%d) = %q, want %q", n, head, want)
		}
	}
}

// A compacted size the log cannot have (larger than the log) is damage:
// the log is compacted rather than left to grow.
func TestImpossibleCompactedSize(t *testing.T) {
	l := testLog(t, nil)
	if err := os.MkdirAll(filepath.Dir(l.path), 0o700); err != nil {
		t.Fatal(err)
	}
	line := `{"t":1795000000,"via":"cli","op":"search","path":".kb/a.md","blob":"abc"}` + "\n"
	data := `{"compacted":999999999999}` + "\n" + strings.Repeat(line, maxLogBytes/len(line)+1)
	if err := os.WriteFile(l.path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := l.Record([]Event{{Via: ViaCLI, Op: OpSearch, Path: ".kb/b.md", Blob: "def"}}); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(l.path); err != nil || fi.Size() > 1000 {
		t.Fatalf("the log was not compacted: %v, %v", fi.Size(), err)
	}
}

// BenchmarkRead reads a log of 3,000 documents' summaries and as many
// records after them, as kbq context and kbq stats read it.
func BenchmarkRead(b *testing.B) {
	var data []byte
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	for i := range 3000 {
		path := fmt.Sprintf(".kb/reference/7.5/Microsoft.PowerShell.Core/About/about_Topic_%d.md", i)
		summary := record{T: now.Unix(), Path: path, Blob: "0123456789abcdef0123456789abcdef01234567", N: 3 + i%5,
			Days: [][2]int64{{day(now) - 2, 1}, {day(now), 2}}}
		data = summary.appendJSON(data)
	}
	for i := range 3000 {
		r := record{T: now.Unix(), Via: ViaMCP, Op: OpSearch, Path: fmt.Sprintf(".kb/reference/7.5/Microsoft.PowerShell.Core/About/about_Topic_%d.md", i*7%3000),
			Blob: "0123456789abcdef0123456789abcdef01234567"}
		data = r.appendJSON(data)
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := read(bytes.NewReader(data), now); err != nil {
			b.Fatal(err)
		}
	}
}
