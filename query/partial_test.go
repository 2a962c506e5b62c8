package query_test

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/kbqdev/kbq/artifact"
	"github.com/kbqdev/kbq/internal/testkb"
	"github.com/kbqdev/kbq/query"
)

// fromWhole is a file held in part whose missing bytes are copied from
// the whole file as they are asked for, and counted.
type fromWhole struct {
	whole, part *os.File
	mu          sync.Mutex
	asked       int64
}

func (f *fromWhole) Need(off, end int64) error {
	buf := make([]byte, end-off)
	if _, err := f.whole.ReadAt(buf, off); err != nil && err != io.EOF {
		return err
	}
	f.mu.Lock()
	f.asked += end - off
	f.mu.Unlock()
	_, err := f.part.WriteAt(buf, off)
	return err
}

func (f *fromWhole) ReadAt(b []byte, off int64) (int, error) {
	if err := f.Need(off, off+int64(len(b))); err != nil {
		return 0, err
	}
	return f.part.ReadAt(b, off)
}

// An index whose segments hold only the bytes every search reads, their
// postings lists and stored fields missing (zeros) until asked for,
// answers every search and get exactly as the whole index: whatever a
// search reads of them, it asks for first.
func TestPartlyHeldIndexAnswersAsWhole(t *testing.T) {
	dir := testkb.Build(t, corpus(rand.New(rand.NewPCG(5, 6)), 150))
	want := answers(t, dir)

	part := t.TempDir()
	var held, piecemeal int64
	var parts []*fromWhole
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		dst := filepath.Join(part, rel)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		n, ok := query.PartlyRead(rel)
		if !ok {
			return os.WriteFile(dst, data, 0o644)
		}
		size := int64(len(data))
		end, err := query.PartEnd(rel, data[size-int64(n):], size)
		if err != nil {
			return err
		}
		// Only the tail is written: the rest of the file reads as zeros.
		out, err := os.Create(dst)
		if err != nil {
			return err
		}
		t.Cleanup(func() { out.Close() })
		if err := out.Truncate(size); err != nil {
			return err
		}
		if _, err := out.WriteAt(data[end:], end); err != nil {
			return err
		}
		whole, err := os.Open(p)
		if err != nil {
			return err
		}
		t.Cleanup(func() { whole.Close() })
		f := &fromWhole{whole: whole, part: out}
		done, err := query.ReadPartly(dst, f)
		if err != nil {
			return err
		}
		t.Cleanup(done)
		parts = append(parts, f)
		held, piecemeal = held+size-end, piecemeal+end
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(parts) < 2 || piecemeal < 4*held {
		t.Fatalf("%d files held in part, %d bytes of them piecemeal and %d whole: too few for the test", len(parts), piecemeal, held)
	}
	if got := answers(t, part); got != want {
		t.Errorf("held in part, the index answers otherwise:\n%s\nwhole:\n%s", got, want)
	}
	var asked int64
	for _, f := range parts {
		asked += f.asked
	}
	if asked == 0 {
		t.Error("nothing was asked for")
	}
	t.Logf("%d of %d bytes asked for", asked, piecemeal)
}

// A footer that is not one, or names offsets past its file, is a damaged
// file, whichever kind.
func TestPartEndRefusesDamagedFooters(t *testing.T) {
	dir := testkb.Build(t, corpus(rand.New(rand.NewPCG(7, 8)), 20))
	checked := 0
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		n, ok := query.PartlyRead(p)
		if !ok {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		size := int64(len(data))
		if query.ReadWhenNeeded(p) { // no footer: read whole when needed
			if end, err := query.PartEnd(p, nil, size); n != 0 || end != size || err != nil {
				t.Errorf("%s: a footer of %d bytes, read piecemeal to %d of %d, %v", p, n, end, size, err)
			}
			return nil
		}
		footer := data[size-int64(n):]
		if end, err := query.PartEnd(p, footer, size); err != nil || end <= 0 || end >= size {
			t.Errorf("%s: %d, %v", p, end, err)
		}
		for name, bad := range map[string][]byte{
			"short":       footer[1:],
			"flipped":     flip(footer, n/2),
			"zeros":       make([]byte, n),
			"a tiny file": footer,
		} {
			at := size
			if name == "a tiny file" {
				at = int64(n) + 1
			}
			if _, err := query.PartEnd(p, bad, at); !errors.Is(err, artifact.ErrCorrupt) {
				t.Errorf("%s, %s footer: %v, want a corrupt artifact", filepath.Base(p), name, err)
			}
		}
		checked++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 2 {
		t.Fatalf("%d files checked", checked)
	}
}

func flip(b []byte, i int) []byte {
	b = bytes.Clone(b)
	b[i] ^= 0xff
	return b
}
