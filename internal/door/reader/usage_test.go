package reader

import (
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/kbqdev/kbq/internal/usage"
)

// recorder is a Usage whose logs live in a directory of the test's own,
// with the artifact directory it records for.
func recorder(t *testing.T) (*Usage, string, func(string) string) {
	t.Helper()
	state := t.TempDir()
	getenv := func(k string) string {
		return map[string]string{"XDG_STATE_HOME": state}[k]
	}
	var notes []string
	u := NewUsage(getenv, func(msg string) { notes = append(notes, msg) })
	t.Cleanup(func() {
		if len(notes) > 0 {
			t.Errorf("notes: %q", notes)
		}
	})
	return u, filepath.Join(t.TempDir(), "repo", ".kbq"), getenv
}

func uses(t *testing.T, dir string, getenv func(string) string) (map[string]int, *usage.Summary) {
	t.Helper()
	sum, _, err := usage.ReadFile(dir, getenv)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for p, u := range sum.Docs {
		out[p] = u.Count
	}
	return out, sum
}

// In the background, the records of many goroutines at once are all
// written by Close, each with the time it was made.
func TestBackgroundRecordsAll(t *testing.T) {
	u, dir, getenv := recorder(t)
	u.Background()
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 50 {
				u.Record(dir, []usage.Event{{Via: usage.ViaHTTP, Op: usage.OpSearch, Path: fmt.Sprintf(".kb/doc%d.md", (g+i)%5), Blob: "abc"}})
			}
		})
	}
	wg.Wait()
	u.Close()
	got, sum := uses(t, dir, getenv)
	total := 0
	for _, n := range got {
		total += n
	}
	if total != 400 || len(got) != 5 || sum.Skipped != 0 {
		t.Errorf("%d uses of %d documents (%d lines skipped), want 400 of 5", total, len(got), sum.Skipped)
	}
	if sum.Since.IsZero() || sum.Since.Year() < 2000 {
		t.Errorf("records without their time: the earliest is %v", sum.Since)
	}
}

// Close writes what is pending and stops the background: records after it
// are written at once, and a second Close does nothing.
func TestRecordAfterClose(t *testing.T) {
	u, dir, getenv := recorder(t)
	u.Background()
	u.Record(dir, []usage.Event{{Via: usage.ViaMCP, Op: usage.OpGet, Path: ".kb/a.md", Blob: "abc"}})
	u.Close()
	u.Record(dir, []usage.Event{{Via: usage.ViaMCP, Op: usage.OpGet, Path: ".kb/b.md", Blob: "def"}})
	if got, _ := uses(t, dir, getenv); got[".kb/a.md"] != 1 || got[".kb/b.md"] != 1 {
		t.Errorf("uses %v, want one each of a and b", got)
	}
	u.Close()
	var none *Usage
	none.Background()
	none.Record(dir, []usage.Event{{Path: ".kb/c.md"}})
	none.Close()
}
