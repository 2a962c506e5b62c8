package query

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/RoaringBitmap/roaring"
	"github.com/bits-and-blooms/bitset"
	"github.com/blevesearch/vellum"
	vregexp "github.com/blevesearch/vellum/regexp"
	"github.com/blugelabs/bluge/index"
	segment "github.com/blugelabs/bluge_segment_api"

	"github.com/kbqdev/kbq/artifact"
)

// The engine evaluates queries term at a time over the segments of a
// Bluge index snapshot: each term's postings are read once, in one loop
// that marks matching chunks in a bitset and adds BM25 scores into an
// array indexed by chunk number. Boolean structure is then set algebra on
// the bitsets. For the few thousand to few hundred thousand chunks of a
// knowledge base this beats document-at-a-time merging, and it keeps
// Bluge's search package, whose initialization alone costs milliseconds,
// out of the kbq binary.

// maxExpansion bounds the terms a prefix or wildcard expands to.
const maxExpansion = 1024

// engine reads one index snapshot.
type engine struct {
	snap   *index.Snapshot
	segs   []seg
	maxDoc uint64
	live   *bitset.BitSet
}

type seg struct {
	segment.Segment
	base    uint64
	deleted *roaring.Bitmap
}

func newEngine(snap *index.Snapshot) (*engine, error) {
	e := &engine{snap: snap}
	for _, ss := range snap.Segments() {
		withSeg, ok := ss.(interface{ Segment() segment.Segment })
		if !ok {
			return nil, fmt.Errorf("unexpected segment type %T", ss)
		}
		s := seg{Segment: withSeg.Segment(), base: e.maxDoc, deleted: ss.Deleted()}
		if s.deleted != nil && s.deleted.IsEmpty() {
			s.deleted = nil
		}
		e.segs = append(e.segs, s)
		e.maxDoc += s.Count()
	}
	// Every chunk is live but the deleted ones, which are few.
	e.live = bitset.New(uint(e.maxDoc)).FlipRange(0, uint(e.maxDoc))
	for _, s := range e.segs {
		if s.deleted == nil {
			continue
		}
		it := s.deleted.Iterator()
		for it.HasNext() {
			if n := it.Next(); uint64(n) < s.Count() {
				e.live.Clear(uint(s.base + uint64(n)))
			}
		}
	}
	return e, nil
}

// eval is the state of one evaluation.
type eval struct {
	e       *engine
	scores  []float64 // by chunk number
	tf      []float64 // scratch: one term's combined frequency, by chunk
	ranking Ranking
	stats   map[string]artifact.FieldStats
	chunks  uint64 // live chunks, N of the idf
}

func (e *engine) newEval(r Ranking, stats map[string]artifact.FieldStats, chunks int) *eval {
	return &eval{e: e, scores: make([]float64, e.maxDoc), ranking: r, stats: stats, chunks: uint64(chunks)}
}

// node is a query operator. match returns the chunks it matches and, when
// scored, adds their scores into ev.scores.
type node interface {
	match(ev *eval, scored bool) (*bitset.BitSet, error)
}

// termNode matches an exact term of a keyword field, unscored.
type termNode struct {
	field, term string
}

func (n termNode) match(ev *eval, _ bool) (*bitset.BitSet, error) {
	out := bitset.New(uint(ev.e.maxDoc))
	term := []byte(n.term)
	var it segment.PostingsIterator
	for _, s := range ev.e.segs {
		dict, err := s.Dictionary(n.field)
		if err != nil {
			return nil, fmt.Errorf("read dictionary of %s: %w", n.field, err)
		}
		pl, err := dict.PostingsList(term, s.deleted, nil)
		if err != nil {
			return nil, fmt.Errorf("read postings of %s:%s: %w", n.field, n.term, err)
		}
		if pl.Count() == 0 {
			continue
		}
		if it, err = pl.Iterator(false, false, false, it); err != nil {
			return nil, err
		}
		for {
			p, err := it.Next()
			if err != nil {
				return nil, fmt.Errorf("read postings of %s:%s: %w", n.field, n.term, err)
			}
			if p == nil {
				break
			}
			out.Set(uint(s.base + p.Number()))
		}
	}
	return out, nil
}

// expandNode matches the terms of fields that start with prefix, or that
// match a wildcard pattern. In text fields each term is scored as a term of
// its own; in keyword fields (text false) they only match.
type expandNode struct {
	fields   []string
	prefix   string
	wildcard string
	text     bool
}

func (n expandNode) match(ev *eval, scored bool) (*bitset.BitSet, error) {
	terms, err := n.expand(ev.e)
	if err != nil {
		return nil, err
	}
	kids := make([]node, len(terms))
	for i, t := range terms {
		if n.text {
			kids[i] = newTextNode(t, n.fields, ev.ranking)
		} else {
			kids[i] = termNode{field: n.fields[0], term: t}
		}
	}
	return anyNode(kids).match(ev, scored)
}

func (n expandNode) expand(e *engine) ([]string, error) {
	var auto segment.Automaton
	var start, end []byte
	if n.wildcard != "" {
		re, err := vregexp.New(wildcardRegexp(n.wildcard))
		if err != nil {
			return nil, nil // a pattern vellum cannot compile matches nothing
		}
		auto = re
	} else {
		start = []byte(n.prefix)
		end = afterPrefix(start)
	}
	seen := make(map[string]bool)
	var terms []string
	for _, field := range n.fields {
		for _, s := range e.segs {
			dict, err := s.Dictionary(field)
			if err != nil {
				return nil, err
			}
			it := dict.Iterator(auto, start, end)
			for len(terms) < maxExpansion {
				entry, err := it.Next()
				if err != nil && err != vellum.ErrIteratorDone {
					it.Close()
					return nil, err
				}
				if entry == nil {
					break
				}
				if t := entry.Term(); !seen[t] {
					seen[t] = true
					terms = append(terms, t)
				}
			}
			it.Close()
		}
	}
	slices.Sort(terms)
	return terms, nil
}

// textNode matches a term in any of the text fields, scored with BM25F
// (see bm25.go): weights holds each field's boost.
// A query that repeats a term counts it times times, as that many clauses
// of it would.
type textNode struct {
	term    string
	fields  []string
	weights []float64
	times   float64
}

func newTextNode(term string, fields []string, r Ranking) textNode {
	w := make([]float64, len(fields))
	for i, f := range fields {
		w[i] = r.boost(f)
	}
	return textNode{term: term, fields: fields, weights: w, times: 1}
}

func (n textNode) match(ev *eval, scored bool) (*bitset.BitSet, error) {
	out := bitset.New(uint(ev.e.maxDoc))
	if scored && ev.tf == nil {
		ev.tf = make([]float64, ev.e.maxDoc)
	}
	term := []byte(n.term)
	k1, b := ev.ranking.K1, ev.ranking.B
	var it segment.PostingsIterator
	for fi, field := range n.fields {
		stats := ev.stats[field]
		w := n.weights[fi]
		for _, s := range ev.e.segs {
			dict, err := s.Dictionary(field)
			if err != nil {
				return nil, fmt.Errorf("read dictionary of %s: %w", field, err)
			}
			pl, err := dict.PostingsList(term, s.deleted, nil)
			if err != nil {
				return nil, fmt.Errorf("read postings of %s:%s: %w", field, n.term, err)
			}
			if pl.Count() == 0 {
				continue
			}
			if it, err = pl.Iterator(scored, scored, false, it); err != nil {
				return nil, err
			}
			for {
				p, err := it.Next()
				if err != nil {
					return nil, fmt.Errorf("read postings of %s:%s: %w", field, n.term, err)
				}
				if p == nil {
					break
				}
				doc := s.base + p.Number()
				out.Set(uint(doc))
				if scored && w != 0 {
					ev.tf[doc] += w * fieldTF(p.Frequency(), artifact.DecodeNorm(p.Norm()), stats, b)
				}
			}
		}
	}
	if scored {
		idf := n.times * IDF(uint64(out.Count()), ev.chunks)
		for i, ok := out.NextSet(0); ok; i, ok = out.NextSet(i + 1) {
			if tf := ev.tf[i]; tf > 0 {
				ev.scores[i] += idf * saturate(tf, k1)
				ev.tf[i] = 0
			}
		}
	}
	return out, nil
}

// afterPrefix returns the smallest key greater than every key starting with
// prefix, or nil when there is none.
func afterPrefix(prefix []byte) []byte {
	end := append([]byte(nil), prefix...)
	for i := len(end) - 1; i >= 0; i-- {
		end[i]++
		if end[i] != 0 {
			return end[:i+1]
		}
	}
	return nil
}

// wildcardRegexp turns a pattern where * is any run and ? any character
// into a regular expression.
func wildcardRegexp(pattern string) string {
	var b strings.Builder
	for _, r := range pattern {
		switch r {
		case '*':
			b.WriteString(".*")
		case '?':
			b.WriteString(".")
		default:
			b.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	return b.String()
}

// anyNode matches chunks matching any of its nodes; scores add up.
type anyNode []node

func (n anyNode) match(ev *eval, scored bool) (*bitset.BitSet, error) {
	out := bitset.New(uint(ev.e.maxDoc))
	for _, k := range n {
		m, err := k.match(ev, scored)
		if err != nil {
			return nil, err
		}
		out.InPlaceUnion(m)
	}
	return out, nil
}

// boolNode matches chunks matching every must node (or, without must
// nodes, any should node) and no mustNot node. Scores of matching should
// and must nodes add up.
type boolNode struct {
	should, must, mustNot []node
}

func (n boolNode) match(ev *eval, scored bool) (*bitset.BitSet, error) {
	var out *bitset.BitSet
	for _, k := range n.must {
		m, err := k.match(ev, scored)
		if err != nil {
			return nil, err
		}
		if out == nil {
			out = m
		} else {
			out.InPlaceIntersection(m)
		}
	}
	if len(n.should) > 0 {
		any, err := anyNode(n.should).match(ev, scored)
		if err != nil {
			return nil, err
		}
		if out == nil {
			out = any
		}
	}
	if out == nil {
		out = ev.e.live.Clone()
	}
	for _, k := range n.mustNot {
		m, err := k.match(ev, false)
		if err != nil {
			return nil, err
		}
		out.InPlaceDifference(m)
	}
	return out, nil
}

// allNode matches every live chunk.
type allNode struct{}

func (allNode) match(ev *eval, _ bool) (*bitset.BitSet, error) { return ev.e.live.Clone(), nil }

// noneNode matches nothing.
type noneNode struct{}

func (noneNode) match(ev *eval, _ bool) (*bitset.BitSet, error) {
	return bitset.New(uint(ev.e.maxDoc)), nil
}

// visitStored visits the stored fields of a chunk.
func (e *engine) visitStored(doc uint64, visit segment.StoredFieldVisitor) error {
	return e.snap.VisitStoredFields(doc, visit)
}
