package postings

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// corpus is a segment built at random: each chunk holds some terms in
// some fields.
type corpus struct {
	docs   int
	lens   [][Fields]uint32
	terms  map[string][]posting
	fact   []float64
	starts []bool
	of     []docOf // the document of each chunk
}

// docOf is what Reader.Document says of a chunk.
type docOf struct {
	depth int
	path  string
	chunk int
}

func randomCorpus(seed uint64, docs, vocab int) *corpus {
	r := rand.New(rand.NewPCG(seed, 1))
	c := &corpus{docs: docs, terms: make(map[string][]posting)}
	for d := range docs {
		// Lengths that need each width: a byte, two bytes, and in one
		// chunk of a hundred, four.
		lens := [Fields]uint32{uint32(r.IntN(200)), uint32(r.IntN(300) + 1), uint32(r.IntN(300) + 1), uint32(r.IntN(300) + 1)}
		if r.IntN(100) == 0 {
			lens[2] = 1<<16 + uint32(r.IntN(1000))
		}
		c.lens = append(c.lens, lens)
		c.fact = append(c.fact, 1+float64(r.IntN(3))/10)
		c.starts = append(c.starts, d == 0 || r.IntN(3) == 0)
		if c.starts[d] {
			// Paths in no particular order, some long.
			path := fmt.Sprintf("docs/%x/%s.md", r.Uint32(), strings.Repeat("x", r.IntN(3)*100))
			c.of = append(c.of, docOf{depth: r.IntN(5), path: path})
		} else {
			o := c.of[d-1]
			c.of = append(c.of, docOf{depth: o.depth, path: o.path, chunk: o.chunk + 1})
		}
		for range r.IntN(12) {
			// Zipf-like: low term numbers are common.
			t := fmt.Sprintf("t%04d", int(float64(vocab)*r.Float64()*r.Float64()))
			f := r.IntN(Fields)
			l := c.terms[t]
			if len(l) == 0 || l[len(l)-1].doc != uint32(d) {
				l = append(l, posting{doc: uint32(d)})
			}
			l[len(l)-1].freq[f] += uint32(r.IntN(5) + 1)
			c.terms[t] = l
		}
	}
	return c
}

func (c *corpus) write(t *testing.T) *Reader {
	t.Helper()
	r, err := Parse(c.encode(t, NewWriter()))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// encode writes the corpus with w and returns the file's bytes.
func (c *corpus) encode(t *testing.T, w *Writer) []byte {
	t.Helper()
	return c.encodeKeyed(t, w, nil)
}

// encodeKeyed is encode with AddTermKey for the terms keys numbers, and
// AddTerm for the others.
func (c *corpus) encodeKeyed(t *testing.T, w *Writer, keys map[string]int32) []byte {
	t.Helper()
	byDoc := make([][]string, c.docs)
	for term, l := range c.terms {
		for _, p := range l {
			byDoc[p.doc] = append(byDoc[p.doc], term)
		}
	}
	for d := range c.docs {
		if c.starts[d] {
			if d%5 == 0 {
				w.StartDocument(9, []byte("a document with no chunks"))
			}
			w.StartDocument(c.of[d].depth, []byte(c.of[d].path))
		}
		w.AddDoc(c.fact[d])
		for f := range Fields {
			w.SetLength(f, int(c.lens[d][f]))
		}
		slices.Sort(byDoc[d])
		for _, term := range byDoc[d] {
			l := c.terms[term]
			i, _ := slices.BinarySearchFunc(l, uint32(d), func(p posting, d uint32) int { return int(p.doc) - int(d) })
			for f, fr := range l[i].freq {
				if k, ok := keys[term]; ok && fr > 0 {
					w.AddTermKey(f, k, []byte(term), int(fr))
				} else if fr > 0 {
					w.AddTerm(f, []byte(term), int(fr))
				}
			}
		}
	}
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestLengthWidths: each field's lengths take the fewest bytes that hold
// its longest, and read back as written.
func TestLengthWidths(t *testing.T) {
	longest := [Fields]uint32{255, 256, 65535, 65536}
	want := [Fields]int{1, 2, 2, 4}
	w := NewWriter()
	for d := range 3 {
		w.StartDocument(1, []byte(fmt.Sprint(d)))
		w.AddDoc(1)
		for f := range Fields {
			w.SetLength(f, int(longest[f])-d)
		}
	}
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	r, err := Parse(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	for f := range Fields {
		if r.lens[f].width != want[f] {
			t.Errorf("field %d, longest %d: width %d, want %d", f, longest[f], r.lens[f].width, want[f])
		}
		for d := range 3 {
			if got := r.Length(uint32(d), f); got != longest[f]-uint32(d) {
				t.Errorf("length of %d.%d = %d, want %d", d, f, got, longest[f]-uint32(d))
			}
		}
	}
}

// TestWriterReset: a writer reused for segment after segment, larger and
// smaller, writes each as a new writer does.
func TestWriterReset(t *testing.T) {
	w := NewWriter()
	for i, size := range []int{300, 5000, 7, 1, 2000} {
		c := randomCorpus(uint64(100+i), size, 50*(i+1))
		if i > 0 {
			w.Reset()
		}
		if got, want := c.encode(t, w), c.encode(t, NewWriter()); !bytes.Equal(got, want) {
			t.Fatalf("segment %d (%d chunks) differs when written by a reused writer", i, size)
		}
		// Terms given by key, some of them (a term given both ways is one
		// term), with keys that mean other terms in other segments.
		w.Reset()
		keys := make(map[string]int32)
		for term := range c.terms {
			if len(keys)%3 != 2 {
				keys[term] = int32(len(keys)*7+i) % 1000
			}
		}
		if len(keys) > 1000 {
			t.Fatal("keys are not distinct")
		}
		if got, want := c.encodeKeyed(t, w, keys), c.encode(t, NewWriter()); !bytes.Equal(got, want) {
			t.Fatalf("segment %d (%d chunks) differs when written with keys", i, size)
		}
	}
}

func TestRoundTrip(t *testing.T) {
	for _, size := range []int{1, 7, 300, 5000} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			c := randomCorpus(uint64(size), size, 400)
			checkReader(t, c.write(t), c)
		})
	}
}

// checkReader checks that r holds c: its chunks' lengths, factors and
// documents, and every term's postings, bounded by their blocks' and
// their list's bounds, and found by Advance.
func checkReader(t *testing.T, r *Reader, c *corpus) {
	t.Helper()
	size := c.docs
	if r.Docs() != uint32(size) || int(r.Terms()) != len(c.terms) {
		t.Fatalf("docs %d terms %d, want %d and %d", r.Docs(), r.Terms(), size, len(c.terms))
	}
	for d := range size {
		for f := range Fields {
			if got := r.Length(uint32(d), f); got != c.lens[d][f] {
				t.Fatalf("length of %d.%d = %d, want %d", d, f, got, c.lens[d][f])
			}
		}
		if got := r.Factor(uint32(d)); got != c.fact[d] {
			t.Fatalf("factor of %d = %v, want %v", d, got, c.fact[d])
		}
		if got := r.Starts(uint32(d)); got != c.starts[d] {
			t.Fatalf("chunk %d starts a document: %v, want %v", d, got, c.starts[d])
		}
		checkDocument(t, r, uint32(d), c.of[d])
	}
	var it Iterator
	for term, want := range c.terms {
		p, ok, err := r.Lookup([]byte(term))
		if err != nil || !ok || p.DF != len(want) {
			t.Fatalf("lookup %s: %v %v df %d, want %d", term, ok, err, p.DF, len(want))
		}
		it.Reset(p, r.Docs())
		n := 0
		for i := 0; it.Next() != NoMore; i++ {
			if i >= len(want) || it.Doc() != want[i].doc || *it.Freqs() != want[i].freq {
				t.Fatalf("%s posting %d = %d %v, want %v", term, i, it.Doc(), *it.Freqs(), want[min(i, len(want)-1)])
			}
			checkBound(t, it.Block(), want[i], c.lens[want[i].doc])
			whole := p.Max
			whole.Last = NoMore
			checkBound(t, &whole, want[i], c.lens[want[i].doc])
			n++
		}
		if it.Err() != nil {
			t.Fatal(it.Err())
		}
		if n != len(want) {
			t.Fatalf("%s: %d postings, want %d", term, n, len(want))
		}
		// Advance lands on the first chunk at or after each target.
		it.Reset(p, r.Docs())
		for target := uint32(0); target < uint32(size); target += uint32(1 + size/37) {
			i, _ := slices.BinarySearchFunc(want, target, func(p posting, d uint32) int { return int(p.doc) - int(d) })
			got := it.Advance(target)
			switch {
			case i == len(want) && got != NoMore:
				t.Fatalf("%s advance %d = %d, want none", term, target, got)
			case i < len(want) && got != want[i].doc:
				t.Fatalf("%s advance %d = %d, want %d", term, target, got, want[i].doc)
			}
		}
	}
	for _, missing := range []string{"", "a", "t", "t00000", "zzz"} {
		if _, ok, err := r.Lookup([]byte(missing)); ok || err != nil {
			t.Errorf("lookup %q: %v %v, want absent", missing, ok, err)
		}
	}
}

// checkBound checks that a block's skip entry bounds a posting in it.
func checkBound(t *testing.T, b *Block, p posting, lens [Fields]uint32) {
	t.Helper()
	if p.doc > b.Last {
		t.Fatalf("chunk %d after its block's last %d", p.doc, b.Last)
	}
	for f, fr := range p.freq {
		if fr == 0 {
			continue
		}
		bounded := false
		for _, pr := range b.Pairs[f][:b.N[f]] {
			bounded = bounded || fr <= pr.Freq && lens[f] >= pr.Len
		}
		if !bounded {
			t.Fatalf("chunk %d field %d: freq %d length %d outside the block's bound %v", p.doc, f, fr, lens[f], b.Pairs[f][:b.N[f]])
		}
	}
}

func TestRange(t *testing.T) {
	c := randomCorpus(3, 2000, 3000)
	r := c.write(t)
	var all []string
	for term := range c.terms {
		all = append(all, term)
	}
	slices.Sort(all)
	for _, tc := range []struct{ from, to string }{{"", ""}, {"t00", "t01"}, {"t0100", "t0200"}, {"t2", ""}, {"u", ""}} {
		var got, want []string
		var to []byte
		if tc.to != "" {
			to = []byte(tc.to)
		}
		for _, term := range all {
			if term >= tc.from && (tc.to == "" || term < tc.to) {
				want = append(want, term)
			}
		}
		err := r.Range([]byte(tc.from), to, func(term []byte, p Postings) bool {
			if p.DF != len(c.terms[string(term)]) {
				t.Errorf("%s: df %d, want %d", term, p.DF, len(c.terms[string(term)]))
			}
			got = append(got, string(term))
			return true
		})
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("range [%q, %q): %d terms (err %v), want %d", tc.from, tc.to, len(got), err, len(want))
		}
	}
}

// TestDamaged flips and cuts bytes of a file: reading it either fails
// with ErrCorrupt or returns postings, and never panics or runs away.
func TestDamaged(t *testing.T) {
	c := randomCorpus(9, 700, 200)
	r := c.write(t)
	good := r.data
	rng := rand.New(rand.NewPCG(4, 4))
	for i := range 3000 {
		data := slices.Clone(good)
		switch i % 3 {
		case 0:
			data = data[:rng.IntN(len(data))]
		default:
			for range 1 + rng.IntN(4) {
				data[rng.IntN(len(data)-footerLen)] ^= byte(1 + rng.IntN(255))
			}
		}
		r, err := Parse(data)
		if err != nil {
			continue
		}
		for d := range r.Docs() {
			r.Document(d) // must not panic, whatever it says
			for f := range Fields {
				r.Length(d, f)
			}
		}
		var it Iterator
		_ = r.Range(nil, nil, func(term []byte, p Postings) bool {
			it.Reset(p, r.Docs())
			n := 0
			for it.Next() != NoMore {
				if n++; n > int(r.Docs()) {
					t.Fatalf("iteration ran past the segment's %d chunks", r.Docs())
				}
			}
			return true
		})
	}
}

func checkDocument(t *testing.T, r *Reader, doc uint32, want docOf) {
	t.Helper()
	depth, path, chunk, ok := r.Document(doc)
	if got := (docOf{depth, string(path), chunk}); !ok || got != want {
		t.Fatalf("document of chunk %d = %v %v, want %v", doc, got, ok, want)
	}
}

// TestMerge merges segments, dropping some chunks, and checks the result
// against the postings recomputed from the inputs.
func TestMerge(t *testing.T) {
	const dropped = ^uint64(0)
	rng := rand.New(rand.NewPCG(8, 8))
	var rs []*Reader
	var cs []*corpus
	var newDocs [][]uint64
	next := uint64(0)
	want := &corpus{terms: make(map[string][]posting)}
	// The inputs are mapped files, as a build's are, whose pages are
	// released all through the merge: reading them again must map them
	// again.
	dir := t.TempDir()
	for i, size := range []int{300, 1, 2000, 45} {
		c := randomCorpus(uint64(i+20), size, 500)
		name := filepath.Join(dir, FileName(uint64(i)))
		if err := os.WriteFile(name, c.encode(t, NewWriter()), 0o644); err != nil {
			t.Fatal(err)
		}
		r, err := Open(name)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		cs, rs = append(cs, c), append(rs, r)
		// Builds delete whole documents: all their chunks or none.
		nd := make([]uint64, size)
		drop := false
		for d := range nd {
			if c.starts[d] {
				drop = rng.IntN(5) == 0
			}
			if drop {
				nd[d] = dropped
				continue
			}
			nd[d] = next
			next++
			want.lens = append(want.lens, c.lens[d])
			want.fact = append(want.fact, c.fact[d])
			want.starts = append(want.starts, c.starts[d])
			want.of = append(want.of, c.of[d])
		}
		newDocs = append(newDocs, nd)
	}
	want.docs = int(next)
	for i, c := range cs {
		for term, l := range c.terms {
			for _, p := range l {
				if nd := newDocs[i][p.doc]; nd != dropped {
					want.terms[term] = append(want.terms[term], posting{doc: uint32(nd), freq: p.freq})
				}
			}
		}
	}
	var buf bytes.Buffer
	done := make(chan struct{})
	released := make(chan int)
	go func() {
		n := 0
		defer func() { released <- n }()
		for {
			select {
			case <-done:
				return
			default:
				for _, r := range rs {
					r.Release()
				}
				n++
			}
		}
	}()
	_, err := Merge(&buf, rs, newDocs, dropped)
	close(done)
	t.Logf("inputs released %d times during the merge", <-released)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Parse(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if got.Docs() != uint32(want.docs) || int(got.Terms()) != len(want.terms) {
		t.Fatalf("merged: %d chunks %d terms, want %d and %d", got.Docs(), got.Terms(), want.docs, len(want.terms))
	}
	for d := range want.docs {
		checkDocument(t, got, uint32(d), want.of[d])
	}
	// The merged file reads back exactly as one written from the merged
	// postings would.
	var again bytes.Buffer
	w := want.write(t)
	again.Write(w.data)
	if !bytes.Equal(buf.Bytes(), again.Bytes()) {
		t.Fatal("merged file differs from the file written from the merged postings")
	}
}

// A merge that drops no chunk joins the segments' lists block by block,
// the first block of each part counted again: the merged file reads as
// the segments' postings renumbered, with bounds that hold.
func TestMergeShifted(t *testing.T) {
	var rs []*Reader
	var newDocs [][]uint64
	want := &corpus{terms: make(map[string][]posting)}
	for i, size := range []int{300, 1, 2000, 45, 129, 128} {
		c := randomCorpus(uint64(i+40), size, 500)
		r, err := Parse(c.encode(t, NewWriter()))
		if err != nil {
			t.Fatal(err)
		}
		rs = append(rs, r)
		nd := make([]uint64, size)
		for d := range nd {
			nd[d] = uint64(want.docs + d)
		}
		newDocs = append(newDocs, nd)
		for term, l := range c.terms {
			for _, p := range l {
				want.terms[term] = append(want.terms[term], posting{doc: p.doc + uint32(want.docs), freq: p.freq})
			}
		}
		want.docs += size
		want.lens = append(want.lens, c.lens...)
		want.fact = append(want.fact, c.fact...)
		want.starts = append(want.starts, c.starts...)
		want.of = append(want.of, c.of...)
	}
	var buf bytes.Buffer
	if _, err := Merge(&buf, rs, newDocs, ^uint64(0)); err != nil {
		t.Fatal(err)
	}
	got, err := Parse(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	checkReader(t, got, want)
}

// A joined merge refuses a skip entry whose block ends past its segment,
// as reading it would.
func TestMergeShiftedDamaged(t *testing.T) {
	c := randomCorpus(7, 300, 50)
	r, err := Parse(c.encode(t, NewWriter()))
	if err != nil {
		t.Fatal(err)
	}
	p, ok, err := r.Lookup([]byte("t0000"))
	if !ok || err != nil {
		t.Fatalf("lookup: %v %v", ok, err)
	}
	if _, err := new(encoder).appendJoined(nil, []Postings{p}, []int{0}, []uint32{0}, []*Reader{r}); err != nil {
		t.Fatalf("the list as written: %v", err)
	}
	_, n := binary.Uvarint(p.data)
	damaged := binary.AppendUvarint(nil, uint64(r.docs)+10)
	p.skip += len(damaged) - n
	p.data = append(damaged, p.data[n:]...)
	if _, err := new(encoder).appendJoined(nil, []Postings{p}, []int{0}, []uint32{0}, []*Reader{r}); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("a block past the segment's end: %v, want ErrCorrupt", err)
	}
}

// TestPareto compares pareto with its definition: sorted by falling
// frequency, the pairs shorter than every pair before them, joined in even
// groups when there are more than MaxPairs.
func TestPareto(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 2000 {
		pairs := make([]Pair, rng.IntN(300))
		maxFreq := []uint32{3, 70, 1000}[rng.IntN(3)]
		for i := range pairs {
			pairs[i] = Pair{Freq: 1 + rng.Uint32N(maxFreq), Len: rng.Uint32N(500)}
		}
		want := slices.Clone(pairs)
		slices.SortFunc(want, func(a, b Pair) int {
			if a.Freq != b.Freq {
				return int(b.Freq) - int(a.Freq)
			}
			return int(a.Len) - int(b.Len)
		})
		var frontier []Pair
		for _, p := range want {
			if len(frontier) == 0 || p.Len < frontier[len(frontier)-1].Len {
				frontier = append(frontier, p)
			}
		}
		if n := len(frontier); n > MaxPairs {
			joined := make([]Pair, MaxPairs)
			for g := range joined {
				joined[g] = Pair{Freq: frontier[g*n/MaxPairs].Freq, Len: frontier[(g+1)*n/MaxPairs-1].Len}
			}
			frontier = joined
		}
		if got := pareto(slices.Clone(pairs)); !slices.Equal(got, frontier) && len(got)+len(frontier) > 0 {
			t.Fatalf("pareto(%v) = %v, want %v", pairs, got, frontier)
		}
	}
}

// An iterator told Only some fields stops at the chunks holding the term
// in one of them, by Next and by Advance, and no others.
func TestIteratorOnly(t *testing.T) {
	c := randomCorpus(9, 3000, 40)
	r := c.write(t)
	for term, list := range c.terms {
		p, ok, err := r.Lookup([]byte(term))
		if err != nil || !ok {
			t.Fatalf("%s: %v %v", term, ok, err)
		}
		for f := range Fields {
			var in [Fields]bool
			in[f] = true
			var want []uint32
			for _, q := range list {
				if q.freq[f] > 0 {
					want = append(want, q.doc)
				}
			}
			var it Iterator
			it.Reset(p, uint32(c.docs))
			it.Only(in)
			var got []uint32
			for d := it.Next(); d != NoMore; d = it.Next() {
				got = append(got, d)
				if it.Freqs()[f] == 0 {
					t.Fatalf("%s, field %d: stopped at %d, which holds none", term, f, d)
				}
			}
			if !slices.Equal(got, want) {
				t.Fatalf("%s, field %d: Next gives %d chunks, want %d", term, f, len(got), len(want))
			}
			// Advance to every third chunk of the segment.
			it.Reset(p, uint32(c.docs))
			it.Only(in)
			for target := uint32(0); target < uint32(c.docs); target += 3 {
				i, _ := slices.BinarySearch(want, target)
				exp := uint32(NoMore)
				if i < len(want) {
					exp = want[i]
				}
				if d := it.Advance(target); d != exp {
					t.Fatalf("%s, field %d: Advance(%d) = %d, want %d", term, f, target, d, exp)
				}
			}
		}
	}
}
