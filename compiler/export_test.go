package compiler

import (
	"maps"
	"math"
	"slices"
	"testing"
	"time"

	segment "github.com/blugelabs/bluge_segment_api"
	"github.com/blugelabs/ice"
)

// ReleaseMergesEvery has every merge release the pages of its mapped
// segments and postings every interval and every KiB written, as large
// merges do, until the returned function is called.
func ReleaseMergesEvery(every time.Duration) (restore func()) {
	bytes, was, written := mapMergeBytes, releaseEvery, releaseBytes
	mapMergeBytes, releaseEvery, releaseBytes = 0, every, 1<<10
	return func() { mapMergeBytes, releaseEvery, releaseBytes = bytes, was, written }
}

// WriteSegmentsWithIce has builds write their segments with ice's own
// writer, those joined from their batches too, until the returned
// function is called.
func WriteSegmentsWithIce() (restore func()) {
	was, join, docs := writeIce, joinIce, partDocs
	writeIce, joinIce, partDocs = writeWithIce, joinWithIce, true
	return func() { writeIce, joinIce, partDocs = was, join, docs }
}

// KeepPartsUpTo has full builds keep the ice parts of their first batches
// of at most chunks chunks in all, and merge their segments as larger
// builds do once there are more, until the returned function is called.
func KeepPartsUpTo(chunks int) (restore func()) {
	was := keepChunks
	keepChunks = chunks
	return func() { keepChunks = was }
}

// SameSegments fails t unless the ice segments a and b hold the same
// chunks: the same stored fields, and the same keyword terms in the same
// chunks, as ice reads them.
func SameSegments(t *testing.T, a, b []byte) {
	t.Helper()
	load := func(data []byte) *ice.Segment {
		seg, err := ice.Load(segment.NewDataBytes(data))
		if err != nil {
			t.Fatal(err)
		}
		return seg.(*ice.Segment)
	}
	sa, sb := load(a), load(b)
	if sa.Count() != sb.Count() || !slices.Equal(sa.Fields(), sb.Fields()) {
		t.Fatalf("%d chunks, fields %q; the other %d, %q", sa.Count(), sa.Fields(), sb.Count(), sb.Fields())
	}
	stored := func(s *ice.Segment, doc uint64) (out []string) {
		err := s.VisitStoredFields(doc, func(field string, value []byte) bool {
			out = append(out, field+"="+string(value))
			return true
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	for doc := range sa.Count() {
		if x, y := stored(sa, doc), stored(sb, doc); !slices.Equal(x, y) {
			t.Fatalf("chunk %d stores %q; the other %q", doc, x, y)
		}
	}
	postings := func(s *ice.Segment, field string) map[string][]uint64 {
		d, err := s.Dictionary(field)
		if err != nil {
			t.Fatal(err)
		}
		out := make(map[string][]uint64)
		for _, term := range iceTerms(t, d) {
			pl, err := d.PostingsList([]byte(term), nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			pi, err := pl.Iterator(true, true, false, nil)
			if err != nil {
				t.Fatal(err)
			}
			walkIcePostings(t, pi, func(p segment.Posting) {
				out[term] = append(out[term], p.Number(), uint64(p.Frequency()), math.Float64bits(p.Norm()))
			})
		}
		return out
	}
	for _, f := range sa.Fields() {
		if x, y := postings(sa, f), postings(sb, f); !maps.EqualFunc(x, y, slices.Equal) {
			t.Fatalf("field %s: terms and postings differ (%d terms, the other %d)", f, len(x), len(y))
		}
	}
}

// iceTerms lists the terms of d, an ice dictionary, in order.
func iceTerms(t *testing.T, d segment.Dictionary) []string {
	t.Helper()
	var terms []string
	it := d.Iterator(nil, nil, nil)
	for {
		e, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		if e == nil {
			return terms
		}
		terms = append(terms, e.Term())
	}
}

// walkIcePostings calls fn with each posting of it, an ice postings iterator.
func walkIcePostings(t *testing.T, it segment.PostingsIterator, fn func(segment.Posting)) {
	t.Helper()
	for {
		p, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		if p == nil {
			return
		}
		fn(p)
	}
}
