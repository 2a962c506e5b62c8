package query

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	segment "github.com/blugelabs/bluge_segment_api"
	"github.com/blugelabs/ice"
	"github.com/golang/snappy"

	"github.com/kbqdev/kbq/artifact"
	"github.com/kbqdev/kbq/internal/testkb"
)

// TestStoredReaderMatchesIce reads every chunk's stored fields with pread,
// through the segment's mapping, and through ice's own reader: the same
// fields, values and order.
func TestStoredReaderMatchesIce(t *testing.T) {
	files := testkb.Files{".kb/context.md": "Project context.\n"}
	for i := range 300 {
		files[fmt.Sprintf(".kb/topics/t%03d.md", i)] = fmt.Sprintf("---\ntitle: T %d\ntags: [a, b%d]\nimportance: 0.%d\n---\n# T %d\n\n## One\n\nText %d.\n\n## Two\n\n%s\n", i, i%7, i%10, i, i, longText(i))
	}
	dir := testkb.Build(t, files)
	defer func(limit int) { mappedStored = limit }(mappedStored)
	for _, limit := range []int{0, math.MaxInt} {
		mappedStored = limit
		storedReaderMatchesIce(t, dir, limit > 0)
	}
}

func storedReaderMatchesIce(t *testing.T, dir string, mapped bool) {
	ix, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	for _, s := range ix.engine.segs {
		if (s.stored.mapped != nil) != mapped {
			t.Fatalf("segment %d read through its mapping: %v, want %v", s.id, s.stored.mapped != nil, mapped)
		}
	}
	// Each segment as ice reads it.
	iceSegs := make(map[uint64]*ice.Segment)
	for _, s := range ix.engine.segs {
		data, err := os.ReadFile(filepath.Join(dir, ix.Manifest.Index, artifact.SegmentName(s.id)))
		if err != nil {
			t.Fatal(err)
		}
		seg, err := ice.Load(segment.NewDataBytes(data))
		if err != nil {
			t.Fatal(err)
		}
		iceSegs[s.id] = seg.(*ice.Segment)
	}
	type kv struct{ field, value string }
	for doc := range ix.engine.maxDoc {
		var got, want []kv
		if err := ix.engine.visitStored(doc, nil, func(f string, v []byte) bool { got = append(got, kv{f, string(v)}); return true }); err != nil {
			t.Fatal(err)
		}
		s := ix.engine.segOf(doc)
		if err := iceSegs[s.id].VisitStoredFields(doc-s.base, func(f string, v []byte) bool { want = append(want, kv{f, string(v)}); return true }); err != nil {
			t.Fatal(err)
		}
		if len(want) == 0 || !slices.Equal(got, want) {
			t.Fatalf("chunk %d, mapped %v: kbq reads %v, ice %v", doc, mapped, got, want)
		}
	}
}

// longText is a section long enough that its record needs a second read.
func longText(i int) string {
	b := make([]byte, 0, 9000)
	for j := 0; len(b) < 8000+i; j++ {
		b = fmt.Appendf(b, "word%d ", (i*j)%9973)
	}
	return string(b)
}

// A record read through the mapping that points or reaches past the
// segment's end is corruption, not a crash.
func TestMappedRecordsPastTheEnd(t *testing.T) {
	values := snappy.Encode(nil, []byte("notes/a.md"))
	meta := binary.AppendUvarint(binary.AppendUvarint(binary.AppendUvarint(nil, 0), 0), 10)
	record := binary.AppendUvarint(binary.AppendUvarint(nil, uint64(len(meta))), uint64(len(values)))
	record = append(append(record, meta...), values...)
	seg := append([]byte("padding!"), record...)
	index := func(offs ...uint64) []byte {
		var b []byte
		for _, o := range offs {
			b = binary.BigEndian.AppendUint64(b, o)
		}
		return b
	}
	r := &storedReader{mapped: seg, index: index(8, uint64(len(seg)), 8), docs: 3, fields: []string{"path"}}
	var got string
	if err := r.visit(0, nil, func(f string, v []byte) bool { got = f + "=" + string(v); return true }); err != nil || got != "path=notes/a.md" {
		t.Fatalf("a whole record: %q, %v", got, err)
	}
	if err := r.visit(1, nil, func(string, []byte) bool { return true }); !errors.Is(err, artifact.ErrCorrupt) {
		t.Errorf("a record at the end: %v, want corruption", err)
	}
	r.mapped = seg[:len(seg)-3] // the record's values cut short
	if err := r.visit(2, nil, func(string, []byte) bool { return true }); !errors.Is(err, artifact.ErrCorrupt) {
		t.Errorf("a record cut short: %v, want corruption", err)
	}
}

// The segments read through their mappings take no more than
// mappedStored in all.
func TestMappedStoredBudget(t *testing.T) {
	dir := testkb.Build(t, testkb.Files{".kb/context.md": "Project context.\n", ".kb/topics/a.md": "# A\n\nSome text.\n"})
	size := mappedBytes(t, dir)
	if size == 0 {
		t.Fatal("no segment read through its mapping")
	}
	defer func(limit int) { mappedStored = limit }(mappedStored)
	for _, limit := range []int{size, size - 1} {
		mappedStored = limit
		if taken := mappedBytes(t, dir); taken > limit || limit == size && taken != size {
			t.Errorf("mappedStored %d: %d bytes of segments read through their mappings", limit, taken)
		}
	}
}

// mappedBytes opens the index in dir and returns how many bytes of its
// segments have their records read through their mappings.
func mappedBytes(t *testing.T, dir string) int {
	t.Helper()
	ix, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	n := 0
	for _, s := range ix.engine.segs {
		n += len(s.stored.mapped)
	}
	return n
}
