package iceread

import (
	"bytes"
	"runtime"
	"strings"
	"testing"

	"github.com/RoaringBitmap/roaring"
	segment "github.com/blugelabs/bluge_segment_api"
	"github.com/blugelabs/ice"
)

func TestConstantsAreIce(t *testing.T) {
	if Type != ice.Type || Version != ice.Version {
		t.Fatalf("%s v%d; ice writes %s v%d", Type, Version, ice.Type, ice.Version)
	}
}

// keywordDoc is a document of keyword fields, each with its terms.
type keywordDoc map[string][]string

type field struct {
	name  string
	terms []string
}

func (f field) Name() string         { return f.name }
func (f field) Length() int          { return len(f.terms) }
func (f field) Value() []byte        { return []byte(f.name) }
func (f field) Index() bool          { return true }
func (f field) Store() bool          { return true }
func (f field) IndexDocValues() bool { return false }
func (f field) EachTerm(vt segment.VisitTerm) {
	for _, t := range f.terms {
		vt(term(t))
	}
}

type term string

func (t term) Term() []byte                       { return []byte(t) }
func (t term) Frequency() int                     { return 1 }
func (t term) EachLocation(segment.VisitLocation) {}

func (d keywordDoc) Analyze() {}
func (d keywordDoc) EachField(vf segment.VisitField) {
	for name, terms := range d {
		vf(field{name, terms})
	}
}

// iceSegment is the segment ice writes of docs, merged (as a build's
// are) when merge is set.
func iceSegment(t testing.TB, merge bool, docs ...keywordDoc) []byte {
	in := make([]segment.Document, len(docs))
	for i, d := range docs {
		in[i] = d
	}
	seg, _, err := ice.New(in, func(string, int) float32 { return 1 })
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if merge {
		_, err = ice.Merge([]segment.Segment{seg}, []*roaring.Bitmap{roaring.New()}, 1<<20).WriteTo(&b, nil)
	} else {
		_, err = seg.(*ice.Segment).WriteTo(&b, nil)
	}
	if err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// walk reads everything the segment data holds, as queries do.
func walk(data []byte) (terms, postings int, err error) {
	s, err := Load(data)
	if err != nil {
		return 0, 0, err
	}
	for _, f := range append(s.Fields(), "absent") {
		d := s.Dictionary(f)
		ts := d.Terms(nil, nil)
		for term, ok := ts.Next(); ok; term, ok = ts.Next() {
			terms++
			for _, except := range []*roaring.Bitmap{nil, roaring.BitmapOf(0, 2)} {
				p, err := ts.Postings(except)
				if err != nil {
					return terms, postings, err
				}
				it := p.Iterator()
				for _, ok := it.Next(); ok; _, ok = it.Next() {
					postings++
				}
				it = p.Iterator()
				it.Advance(1)
				if _, err := d.Postings(term, except); err != nil {
					return terms, postings, err
				}
			}
		}
		if err := ts.Err(); err != nil {
			return terms, postings, err
		}
	}
	return terms, postings, nil
}

func TestWalk(t *testing.T) {
	docs := []keywordDoc{
		{"path": {"a.md"}, "facet": {"kind:note", "tag:go"}},
		{"path": {"b.md"}, "facet": {"kind:note"}},
		{"path": {"c.md"}, "facet": {"kind:topic", "tag:go"}},
	}
	for _, merge := range []bool{false, true} {
		terms, postings, err := walk(iceSegment(t, merge, docs...))
		if err != nil || terms != 6 || postings != 10 {
			t.Fatalf("merged %v: %d terms, %d postings, %v; want 6, 10", merge, terms, postings, err)
		}
	}
}

// A damaged segment is an error, or read as it is; what panics on one is
// the FST and bitmap libraries alone (kbq's reads recover from theirs,
// query/guard.go), never this package.
func FuzzLoad(f *testing.F) {
	docs := []keywordDoc{
		{"path": {"a.md"}, "facet": {"kind:note", "tag:go"}},
		{"path": {"b.md"}, "facet": {"kind:note"}},
	}
	f.Add(iceSegment(f, false, docs...))
	f.Add(iceSegment(f, true, docs...))
	f.Fuzz(func(t *testing.T, data []byte) {
		defer func() {
			if r := recover(); r != nil {
				if at := panicked(); !strings.HasPrefix(at, "github.com/blevesearch/vellum.") && !strings.HasPrefix(at, "github.com/RoaringBitmap/roaring") {
					t.Fatalf("panic in %s: %v", at, r)
				}
			}
		}()
		walk(data)
	})
}

// panicked, called by a deferred function recovering a panic, returns the
// function that panicked: the first on the stack past the runtime's.
func panicked() string {
	pcs := make([]uintptr, 64)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(3, pcs)])
	for {
		fr, more := frames.Next()
		if !strings.HasPrefix(fr.Function, "runtime.") {
			return fr.Function
		}
		if !more {
			return ""
		}
	}
}
