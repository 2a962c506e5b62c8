package compiler

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	segment "github.com/blugelabs/bluge_segment_api"
)

// iceBytes is the segment ice writes of docs.
func iceBytes(t *testing.T, docs []segment.Document) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := writeWithIce(&b, docs); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// randomDocs makes n documents of random stored values and keywords, as
// index documents are made: fields in any order, some named twice, empty
// values, terms shared among documents (one of them by all, so that its
// postings span chunks, another by the second half) and repeated within
// one.
func randomDocs(r *rand.Rand, n int) []segment.Document {
	names := []string{"path", "body", "facet", "a", "zz", "Title", "_kind", "lines", "x.y", "tags"}
	words := []string{"alpha", "beta", "gamma", "kind:note", "tag:go", "scope:/", "é", "", "zeta", "a b"}
	value := func() []byte {
		switch r.IntN(4) {
		case 0:
			return nil
		case 1:
			return []byte(strings.Repeat("compressible text ", r.IntN(200)))
		default:
			b := make([]byte, r.IntN(40))
			for i := range b {
				b[i] = byte(r.IntN(256))
			}
			return b
		}
	}
	docs := make([]segment.Document, n)
	for i := range docs {
		var d indexDoc
		d = append(d, keyword("facet", nil, false, []byte("all")))
		if i >= n/2 {
			// Postings of more than 1,024 documents, in the last of
			// their chunks only.
			d = append(d, keyword("late", nil, false, []byte("half")))
		}
		for range r.IntN(8) {
			name := names[r.IntN(len(names))]
			switch r.IntN(3) {
			case 0:
				d = append(d, stored(name, value()))
			default:
				var terms [][]byte
				for range r.IntN(4) {
					terms = append(terms, []byte(words[r.IntN(len(words))]))
				}
				f := keyword(name, value(), r.IntN(2) == 0, terms...)
				f.length += r.IntN(3)
				if len(f.terms) > 0 {
					f.terms[0].freq += r.IntN(3)
				}
				d = append(d, f)
			}
		}
		r.Shuffle(len(d), func(a, b int) { d[a], d[b] = d[b], d[a] })
		docs[i] = d
	}
	return docs
}

// The segment writer writes what ice writes, to the byte.
func TestIceSegmentMatchesIce(t *testing.T) {
	for _, n := range []int{0, 1, 2, 7, 300, 1023, 1024, 1025, 2600} {
		for seed := range uint64(3) {
			t.Run(fmt.Sprintf("%d docs, seed %d", n, seed), func(t *testing.T) {
				docs := randomDocs(rand.New(rand.NewPCG(seed, uint64(n))), n)
				want := iceBytes(t, docs)
				var got bytes.Buffer
				if err := writeIceSegment(&got, docs); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got.Bytes(), want) {
					at := 0
					for at < min(got.Len(), len(want)) && got.Bytes()[at] == want[at] {
						at++
					}
					t.Fatalf("%d bytes, ice %d; they differ from byte %d", got.Len(), len(want), at)
				}
			})
		}
	}
}

// Documents encoded in parts, each numbering its own fields and keeping
// its records in blocks, are written as the one segment ice writes of
// them all.
func TestIcePartsMatchIce(t *testing.T) {
	defer func(size int) { recordBlock = size }(recordBlock)
	for _, n := range []int{2, 7, 300, 1025, 2600} {
		for seed := range uint64(3) {
			recordBlock = []int{1 << 20, 1, 700}[seed]
			t.Run(fmt.Sprintf("%d docs, seed %d, blocks of %d", n, seed, recordBlock), func(t *testing.T) {
				r := rand.New(rand.NewPCG(seed, uint64(n)+7))
				docs := randomDocs(r, n)
				var parts []*icePart
				for rest := docs; len(rest) > 0; {
					k := 1 + r.IntN(len(rest))
					ids := make([]indexDoc, k)
					for i := range ids {
						ids[i] = rest[i].(indexDoc)
					}
					parts = append(parts, newIcePart(ids))
					rest = rest[k:]
				}
				var got bytes.Buffer
				if err := writeIceParts(&got, parts); err != nil {
					t.Fatal(err)
				}
				if want := iceBytes(t, docs); !bytes.Equal(got.Bytes(), want) {
					t.Fatalf("%d parts: %d bytes, ice %d", len(parts), got.Len(), len(want))
				}
			})
		}
	}
}
