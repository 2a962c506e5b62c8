package compiler

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/RoaringBitmap/roaring"
	segment "github.com/blugelabs/bluge_segment_api"
	"github.com/blugelabs/ice"

	"github.com/kbqdev/kbq/artifact/iceread"
)

// kbq reads segments with iceread, the compiler writes them as ice does:
// the reader finds what ice's own reader finds in segments of random
// documents, every term of every field, with and without deleted chunks.
func TestIceReadMatchesIce(t *testing.T) {
	for _, n := range []int{1, 2, 7, 300, 1025, 2600} {
		for seed := range uint64(2) {
			t.Run(fmt.Sprintf("%d docs, seed %d", n, seed), func(t *testing.T) {
				r := rand.New(rand.NewPCG(seed, uint64(n)+100))
				docs := randomDocs(r, n)
				for i, d := range docs {
					// A term of one chunk each: ice keeps it in the
					// dictionary itself.
					id := []byte(fmt.Sprintf("doc-%d", i))
					docs[i] = append(d.(indexDoc), keyword("path", id, true, id))
				}
				compareIceRead(t, r, iceBytes(t, docs))
				// Merged, as a build's segments end: ice's merge keeps a
				// term of one chunk in the dictionary itself.
				cut := r.IntN(n + 1)
				var segs []segment.Segment
				var drops []*roaring.Bitmap
				for _, part := range [][]segment.Document{docs[:cut], docs[cut:]} {
					if len(part) == 0 {
						continue
					}
					seg, err := ice.Load(segment.NewDataBytes(iceBytes(t, part)))
					if err != nil {
						t.Fatal(err)
					}
					segs = append(segs, seg)
					drop := roaring.New()
					if len(part) > 1 && r.IntN(2) == 0 {
						drop.Add(uint32(r.IntN(len(part))))
					}
					drops = append(drops, drop)
				}
				var merged bytes.Buffer
				if _, err := ice.Merge(segs, drops, 1<<20).WriteTo(&merged, nil); err != nil {
					t.Fatal(err)
				}
				compareIceRead(t, r, merged.Bytes())
			})
		}
	}
}

// compareIceRead fails t unless iceread reads the segment data as ice
// does.
func compareIceRead(t *testing.T, r *rand.Rand, data []byte) {
	t.Helper()
	want, err := ice.Load(segment.NewDataBytes(data))
	if err != nil {
		t.Fatal(err)
	}
	got, err := iceread.Load(data)
	if err != nil {
		t.Fatal(err)
	}
	w := want.(*ice.Segment)
	if got.Count() != w.Count() || got.StoredIndexOffset() != w.StoredIndexOffset() || !slices.Equal(got.Fields(), w.Fields()) {
		t.Fatalf("%d chunks, stored at %d, fields %q; ice: %d, %d, %q",
			got.Count(), got.StoredIndexOffset(), got.Fields(), w.Count(), w.StoredIndexOffset(), w.Fields())
	}
	deleted := roaring.New()
	for doc := range w.Count() {
		if r.IntN(3) == 0 {
			deleted.Add(uint32(doc))
		}
	}
	terms, oneHit := 0, 0
	for _, field := range append(w.Fields(), "no such field") {
		wd, err := w.Dictionary(field)
		if err != nil {
			t.Fatal(err)
		}
		gd := got.Dictionary(field)
		wantTerms, gotTerms := iceTerms(t, wd), []string(nil)
		gt := gd.Terms(nil, nil)
		for term, ok := gt.Next(); ok; term, ok = gt.Next() {
			gotTerms = append(gotTerms, string(term))
			for _, except := range []*roaring.Bitmap{nil, deleted} {
				p, err := gt.Postings(except)
				if err != nil {
					t.Fatal(err)
				}
				comparePostings(t, r, field, string(term), p, wd, except)
				if p.Count() == 1 && except == nil {
					oneHit++
				}
			}
		}
		if gt.Err() != nil {
			t.Fatal(gt.Err())
		}
		if !slices.Equal(gotTerms, wantTerms) {
			t.Fatalf("field %s: terms %q; ice %q", field, gotTerms, wantTerms)
		}
		terms += len(gotTerms)
		for _, term := range append(wantTerms, "absent", "") {
			for _, except := range []*roaring.Bitmap{nil, deleted} {
				p, err := gd.Postings([]byte(term), except)
				if err != nil {
					t.Fatal(err)
				}
				comparePostings(t, r, field, term, p, wd, except)
			}
		}
		if len(wantTerms) > 1 { // a range, as a prefix filter reads one
			lo, hi := wantTerms[len(wantTerms)/3], wantTerms[2*len(wantTerms)/3]
			var inRange []string
			gt := gd.Terms([]byte(lo), []byte(hi))
			for term, ok := gt.Next(); ok; term, ok = gt.Next() {
				inRange = append(inRange, string(term))
			}
			from := slices.Index(wantTerms, lo)
			if want := wantTerms[from : from+len(inRange)]; len(inRange) == 0 && lo != hi || !slices.Equal(inRange, want) || slices.Contains(inRange, hi) {
				t.Fatalf("field %s: terms from %q to %q: %q", field, lo, hi, inRange)
			}
		}
	}
	if terms == 0 || oneHit == 0 {
		t.Fatalf("%d terms compared, %d of one chunk", terms, oneHit)
	}
}

// comparePostings fails t unless p holds the chunks ice's dictionary wd
// gives term, but for except, counted, walked and advanced through alike.
func comparePostings(t *testing.T, r *rand.Rand, field, term string, p iceread.Postings, wd segment.Dictionary, except *roaring.Bitmap) {
	t.Helper()
	wp, err := wd.PostingsList([]byte(term), except, nil)
	if err != nil {
		t.Fatal(err)
	}
	if p.Count() != wp.Count() {
		t.Fatalf("%s:%s: %d chunks; ice %d", field, term, p.Count(), wp.Count())
	}
	wi, err := wp.Iterator(false, false, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	var want []uint64
	walkIcePostings(t, wi, func(x segment.Posting) { want = append(want, x.Number()) })
	var got []uint64
	gi := p.Iterator()
	for doc, ok := gi.Next(); ok; doc, ok = gi.Next() {
		got = append(got, doc)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("%s:%s: chunks %v; ice %v", field, term, got, want)
	}
	// Advance, to targets in order, on both.
	wi, _ = wp.Iterator(false, false, false, nil)
	gi = p.Iterator()
	target := uint64(0)
	for range 6 {
		target += uint64(r.IntN(700))
		x, err := wi.Advance(target)
		if err != nil {
			t.Fatal(err)
		}
		doc, ok := gi.Advance(target)
		if ok != (x != nil) || ok && doc != x.Number() {
			t.Fatalf("%s:%s: advance to %d: %d, %v; ice %v", field, term, target, doc, ok, x)
		}
		if ok {
			target = doc
		}
	}
}
