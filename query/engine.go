package query

import (
	"bytes"
	"cmp"
	"container/heap"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/RoaringBitmap/roaring"
	"github.com/bits-and-blooms/bitset"
	segment "github.com/blugelabs/bluge_segment_api"

	"github.com/kbqdev/kbq/artifact"
	"github.com/kbqdev/kbq/artifact/iceread"
	"github.com/kbqdev/kbq/artifact/postings"
	"github.com/kbqdev/kbq/internal/mmap"
)

// The engine evaluates queries term at a time over the segments of a
// Bluge index snapshot: each term's postings are read once, in one loop
// that marks matching chunks in a bitset and adds BM25 scores into an
// array indexed by chunk number. Boolean structure is then set algebra on
// the bitsets. For the few thousand to few hundred thousand chunks of a
// knowledge base this beats document-at-a-time merging, and it keeps
// Bluge's search package, whose initialization alone costs milliseconds,
// out of the kbq binary.

// maxExpansion bounds the terms a prefix or wildcard expands to: in text
// fields, the most frequent of them, and the search says it was cut.
// maxScanned bounds the dictionary entries read to find them.
const (
	maxExpansion = 128
	maxScanned   = 1 << 20
)

// engine reads one index: the segments its newest snapshot lists.
type engine struct {
	segs   []seg
	maxDoc uint64
	live   *bitset.BitSet
}

// seg is a segment: its ice segment holds the stored and keyword fields,
// text the postings of the text fields.
type seg struct {
	*iceread.Segment
	unmap   func() error
	text    *postings.Reader
	stored  *storedReader
	id      uint64
	base    uint64
	deleted *roaring.Bitmap
}

// newEngine opens the index in dir. It reads the snapshot and loads the
// segments itself rather than through Bluge's index package, which would
// bring a second segment format, zstd and its writers into kbq.
func newEngine(dir string) (_ *engine, err error) {
	snap, err := artifact.ReadSnapshot(dir)
	if err != nil {
		return nil, err
	}
	e := &engine{}
	defer func() {
		if err != nil {
			e.close()
		}
	}()
	mapped := mappedStored // what the segments' records may take of mappings
	for _, ss := range snap.Segments {
		s, err := openSeg(dir, ss.ID, &mapped)
		if err != nil {
			return nil, err
		}
		s.id, s.base, s.deleted = ss.ID, e.maxDoc, ss.Deleted
		if s.deleted != nil && s.deleted.IsEmpty() {
			s.deleted = nil
		}
		e.segs = append(e.segs, s)
		if uint64(s.text.Docs()) != s.Count() {
			return nil, fmt.Errorf("postings of segment %d hold %d chunks, the segment %d", ss.ID, s.text.Docs(), s.Count())
		}
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

// openSeg maps segment id of dir and opens its postings and stored fields,
// those read through the mapping when the segment fits in what is left of
// mapped, which it then takes.
func openSeg(dir string, id uint64, mapped *int) (s seg, err error) {
	name := filepath.Join(dir, artifact.SegmentName(id))
	data, unmap, err := mmap.Map(name)
	if err != nil {
		return seg{}, err
	}
	s.unmap = unmap
	defer func() {
		if err != nil {
			s.close()
		}
	}()
	if s.Segment, err = iceread.Load(data); err != nil {
		return s, fmt.Errorf("load segment %s: %w", name, err)
	}
	kbt := filepath.Join(dir, postings.FileName(id))
	if s.text, err = postings.Open(kbt); err != nil {
		return s, err
	}
	if p := partialOf(kbt); p != nil {
		s.text.SetNeed(p.Need)
	}
	if s.stored, err = openStored(name, data, s.Segment, mapped); err != nil {
		return s, err
	}
	return s, nil
}

// close releases what openSeg opened.
func (s *seg) close() {
	if s.text != nil {
		s.text.Close()
	}
	if s.stored != nil {
		s.stored.close()
	}
	if s.unmap != nil {
		s.unmap()
	}
}

// factor returns the score factor of a chunk: its document's importance.
func (e *engine) factor(doc uint64) float64 {
	s := e.segOf(doc)
	return s.text.Factor(uint32(doc - s.base))
}

// segOf returns the segment holding chunk doc, which must be below maxDoc.
func (e *engine) segOf(doc uint64) *seg {
	i, _ := slices.BinarySearchFunc(e.segs, doc, func(s seg, doc uint64) int {
		return cmp.Compare(s.base+s.Count(), doc+1)
	})
	return &e.segs[i]
}

// firstRanked returns the chunks of docs that rank first, n of them, or
// with collapse the first chunks of n documents, in the order rank puts
// hits in: score, then deeper scope, path and chunk number. It reads the
// scope depths and paths from the postings' document tables, not from the
// stored fields: chunks of equal scores are common (a page copied into
// each version of a documentation set), and reading each one's stored
// fields to place it cost a fifth of a query's time at 30 copies of
// PowerShell-Docs, where a query's top five documents came with 150 tied
// chunks.
func (e *engine) firstRanked(docs []scoredDoc, n int, collapse bool) ([]scoredDoc, error) {
	// The n first are kept in a heap, worst on top: a query that ties
	// every chunk (a lone *) ranks them in memory for n, not for all.
	// Collapsed, each path is kept once, with its best chunk; a path
	// pushed out comes back only with a better chunk, which is then its
	// best.
	sel := placedHeap{}
	if collapse {
		sel.at = make(map[string]int, n)
	}
	for _, d := range docs {
		s := e.segOf(d.doc)
		depth, path, chunk, ok := s.text.Document(uint32(d.doc - s.base))
		if !ok {
			return nil, fmt.Errorf("%w: no document for chunk %d of a segment", artifact.ErrCorrupt, d.doc-s.base)
		}
		p := placed{d, depth, chunk, path}
		if collapse {
			if i, ok := sel.at[string(path)]; ok {
				if comparePlaced(p, sel.ps[i]) < 0 {
					sel.ps[i] = p
					heap.Fix(&sel, i)
				}
				continue
			}
		}
		if len(sel.ps) == n {
			if n == 0 || comparePlaced(p, sel.ps[0]) >= 0 {
				continue
			}
			heap.Pop(&sel)
		}
		heap.Push(&sel, p)
	}
	slices.SortFunc(sel.ps, comparePlaced)
	first := make([]scoredDoc, len(sel.ps))
	for i, p := range sel.ps {
		first[i] = p.scoredDoc
	}
	return first, nil
}

// placed is a chunk with what places it among equal scores.
type placed struct {
	scoredDoc
	depth, chunk int
	path         []byte
}

// comparePlaced orders chunks best first: by score, then the deeper
// scope, then path and chunk.
func comparePlaced(a, b placed) int {
	return cmp.Or(cmp.Compare(b.score, a.score), cmp.Compare(b.depth, a.depth),
		bytes.Compare(a.path, b.path), cmp.Compare(a.chunk, b.chunk))
}

// placedHeap keeps chunks worst first and, when at is set, where each
// path is.
type placedHeap struct {
	ps []placed
	at map[string]int
}

func (h placedHeap) Len() int           { return len(h.ps) }
func (h placedHeap) Less(i, j int) bool { return comparePlaced(h.ps[i], h.ps[j]) > 0 }
func (h placedHeap) Swap(i, j int) {
	h.ps[i], h.ps[j] = h.ps[j], h.ps[i]
	if h.at != nil {
		h.at[string(h.ps[i].path)], h.at[string(h.ps[j].path)] = i, j
	}
}

func (h *placedHeap) Push(x any) {
	p := x.(placed)
	if h.at != nil {
		h.at[string(p.path)] = len(h.ps)
	}
	h.ps = append(h.ps, p)
}

func (h *placedHeap) Pop() any {
	x := h.ps[len(h.ps)-1]
	h.ps = h.ps[:len(h.ps)-1]
	if h.at != nil {
		delete(h.at, string(x.path))
	}
	return x
}

// close releases the segments.
func (e *engine) close() {
	for i := range e.segs {
		e.segs[i].close()
	}
}

// eval is the state of one evaluation.
type eval struct {
	e       *engine
	scores  []float64 // by chunk number
	tf      []float64 // scratch: one term's combined frequency, by chunk
	ranking Ranking
	stats   map[string]artifact.FieldStats
	chunks  uint64 // live chunks, N of the idf
	// coll, when several artifacts are searched as one, records or
	// supplies the document frequencies of the union (union.go).
	coll *collection
	// bar, when set, is a score chunks may be skipped below once
	// exactTotals matches are counted, counted of them elsewhere: the
	// score of the N-th best result of the other artifacts of a Union
	// (unionBar).
	bar     float64
	hasBar  bool
	counted int
	notes   []string
	// idfs are the idf of each term scored, for what the query's words
	// can score at most (ideal).
	idfs map[string]float64
	budget
}

// noteIDF records the idf of a term the query scores.
func (ev *eval) noteIDF(term string, idf float64) {
	if ev.idfs == nil {
		ev.idfs = map[string]float64{}
	}
	ev.idfs[term] = max(ev.idfs[term], idf)
}

// ideal is the most the query's words can score in a chunk: the sum of
// their idf, each fully saturated, counting of each OR's alternatives the
// one that can score most. The terms are summed in order, so that the
// same search gives the same shares (Result.Lexical) to the last bit.
func (ev *eval) ideal(alternatives [][]string) float64 {
	in := map[string]bool{}
	var sum float64
	for _, group := range alternatives {
		best := 0.0
		for _, t := range group {
			in[t] = true
			best = max(best, ev.idfs[t])
		}
		sum += best
	}
	rest := make([]string, 0, len(ev.idfs))
	for t := range ev.idfs {
		if !in[t] {
			rest = append(rest, t)
		}
	}
	slices.Sort(rest)
	for _, t := range rest {
		sum += ev.idfs[t]
	}
	return sum
}

// note records something the user should know about how the query ran,
// once.
func (ev *eval) note(s string) {
	if !slices.Contains(ev.notes, s) {
		ev.notes = append(ev.notes, s)
	}
}

func (e *engine) newEval(r Ranking, stats map[string]artifact.FieldStats, chunks int) *eval {
	return &eval{e: e, ranking: r, stats: stats, chunks: uint64(chunks)}
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
	out := ev.bits()
	term := []byte(n.term)
	for _, s := range ev.e.segs {
		pl, err := s.Dictionary(n.field).Postings(term, s.deleted)
		if err != nil {
			return nil, fmt.Errorf("read postings of %s:%s: %w", n.field, n.term, err)
		}
		it := pl.Iterator()
		for doc, ok := it.Next(); ok; doc, ok = it.Next() {
			out.Set(uint(s.base + doc))
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
	if !n.text {
		return n.matchKeyword(ev)
	}
	terms, err := n.expand(ev)
	if err != nil {
		return nil, err
	}
	kids := make([]node, len(terms))
	for i, t := range terms {
		kids[i] = newTextNode(t, n.fields, ev.ranking)
	}
	return anyNode(kids).match(ev, scored)
}

// matchKeyword matches every term of a keyword field that starts with the
// prefix, into one set: a filter (path:, topic:, a scope and the scopes
// below it) is never cut short, and costs the postings it matches.
func (n expandNode) matchKeyword(ev *eval) (*bitset.BitSet, error) {
	if err := ev.cancelled(); err != nil {
		return nil, err
	}
	out := ev.bits()
	start := []byte(n.prefix)
	end := afterPrefix(start)
	for _, field := range n.fields {
		for _, s := range ev.e.segs {
			terms := s.Dictionary(field).Terms(start, end)
			for term, ok := terms.Next(); ok; term, ok = terms.Next() {
				pl, err := terms.Postings(s.deleted)
				if err != nil {
					return nil, fmt.Errorf("read postings of %s:%s: %w", field, term, err)
				}
				it := pl.Iterator()
				for doc, ok := it.Next(); ok; doc, ok = it.Next() {
					out.Set(uint(s.base + doc))
				}
			}
			if err := terms.Err(); err != nil {
				return nil, fmt.Errorf("read dictionary of %s: %w", field, err)
			}
		}
	}
	return out, nil
}

// expand returns the terms of the text fields a prefix or wildcard stands
// for: the most frequent, within the query's budget.
func (n expandNode) expand(ev *eval) ([]string, error) {
	key := strings.Join(n.fields, "\x00") + "\x01" + n.prefix + "\x01" + n.wildcard
	if terms, ok := ev.memo[key]; ok {
		return terms, nil
	}
	if err := ev.cancelled(); err != nil {
		return nil, err
	}
	limit := min(maxExpansion, maxExpandedTerms-ev.expanded)
	if limit <= 0 || ev.scanned >= maxScannedTotal {
		ev.note(fmt.Sprintf("the query's prefixes and wildcards reached their limit (%d terms in all): %s and those after it were left out; make them longer", maxExpandedTerms, n.pattern()))
		return nil, nil
	}
	terms, err := n.expandText(ev, limit)
	if err != nil {
		return nil, err
	}
	ev.expanded += len(terms)
	if ev.memo == nil {
		ev.memo = make(map[string][]string)
	}
	ev.memo[key] = terms
	return terms, nil
}

// expandText expands over the text postings' dictionaries, keeping the
// limit terms most chunks hold, and notes when there were more.
func (n expandNode) expandText(ev *eval, limit int) ([]string, error) {
	start := n.prefix
	if n.wildcard != "" {
		start = wildcardPrefix(n.wildcard)
	}
	from := []byte(start)
	to := afterPrefix(from)
	df := make(map[string]int)
	scanned := 0
	for _, s := range ev.e.segs {
		err := s.text.Range(from, to, func(term []byte, p postings.Postings) bool {
			if n.wildcard == "" || matchWildcard(n.wildcard, term) {
				df[string(term)] += p.DF
				if len(df) > 16*limit {
					pruneRare(df, 4*limit) // memory stays bounded; the most frequent stay
				}
			}
			scanned++
			ev.scanned++
			return scanned < maxScanned && ev.scanned < maxScannedTotal
		})
		if err != nil {
			return nil, fmt.Errorf("read dictionary: %w", err)
		}
	}
	terms := slices.Collect(maps.Keys(df))
	slices.SortFunc(terms, func(a, b string) int { return cmp.Or(cmp.Compare(df[b], df[a]), strings.Compare(a, b)) })
	// The most frequent terms first, as many as the limit and the query's
	// budget of postings take: a term costs the chunks that hold it.
	kept := terms[:0:0]
	for _, t := range terms {
		if len(kept) == limit {
			break
		}
		if ev.expandedDF+df[t] > maxExpandedPostings {
			continue
		}
		ev.expandedDF += df[t]
		kept = append(kept, t)
	}
	if len(kept) < len(terms) {
		ev.note(fmt.Sprintf("%s matches %d terms or more: searched %d of the most frequent; make it longer to narrow it", n.pattern(), len(terms), len(kept)))
	}
	slices.Sort(kept)
	return kept, nil
}

// pruneRare keeps the keep terms of df that most chunks hold, ties going
// to the first in order, so that the same query keeps the same terms.
func pruneRare(df map[string]int, keep int) {
	counts := slices.Collect(maps.Values(df))
	slices.SortFunc(counts, func(a, b int) int { return cmp.Compare(b, a) })
	floor := counts[keep-1]
	var ties []string
	for t, n := range df {
		switch {
		case n < floor:
			delete(df, t)
		case n == floor:
			ties = append(ties, t)
		}
	}
	if over := len(df) - keep; over > 0 {
		slices.Sort(ties)
		for _, t := range ties[len(ties)-over:] {
			delete(df, t)
		}
	}
}

// pattern is the expansion as the query wrote it.
func (n expandNode) pattern() string {
	if n.wildcard != "" {
		return n.wildcard
	}
	return n.prefix + "*"
}

// textNode matches a term in any of its text fields, scored with BM25F
// (see bm25.go): weights holds each field's boost, in the order of
// artifact.TextFields, and in whether the term is searched in the field.
// A query that repeats a term counts it times times, as that many clauses
// of it would.
type textNode struct {
	term    string
	in      [postings.Fields]bool
	weights [postings.Fields]float64
	times   float64
}

func newTextNode(term string, fields []string, r Ranking) textNode {
	n := textNode{term: term, times: 1}
	for i, f := range artifact.TextFields {
		if slices.Contains(fields, f) {
			n.in[i], n.weights[i] = true, r.boost(f)
		}
	}
	return n
}

// allFields reports whether the node searches every text field.
func (n textNode) allFields() bool {
	return n.in == [postings.Fields]bool{true, true, true, true}
}

func (n textNode) match(ev *eval, scored bool) (*bitset.BitSet, error) {
	out := ev.bits()
	scored = scored && ev.scores != nil // nothing of the query scores
	if scored && ev.tf == nil {
		ev.tf = make([]float64, ev.e.maxDoc)
	}
	term := []byte(n.term)
	sc := ev.termScorer(n)
	var it postings.Iterator
	for _, s := range ev.e.segs {
		p, ok, err := s.text.Lookup(term)
		if err != nil {
			return nil, fmt.Errorf("read postings of %s: %w", n.term, err)
		}
		if !ok {
			continue
		}
		it.Reset(p, s.text.Docs())
		for d := it.Next(); d != postings.NoMore; d = it.Next() {
			doc := s.base + uint64(d)
			if !ev.e.live.Test(uint(doc)) {
				continue
			}
			tf, ok := sc.tf(it.Freqs(), s.text, d)
			if !ok {
				continue
			}
			out.Set(uint(doc))
			if scored {
				ev.tf[doc] = tf
			}
		}
		if err := it.Err(); err != nil {
			return nil, fmt.Errorf("read postings of %s: %w", n.term, err)
		}
	}
	if scored {
		idf := n.times * IDF(ev.df(n, uint64(out.Count())), ev.chunks)
		ev.noteIDF(n.term, idf)
		for i, ok := out.NextSet(0); ok; i, ok = out.NextSet(i + 1) {
			if tf := ev.tf[i]; tf > 0 {
				ev.scores[i] += idf * saturate(tf, ev.ranking.K1)
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

// anyNode matches chunks matching any of its nodes; scores add up.
type anyNode []node

func (n anyNode) match(ev *eval, scored bool) (*bitset.BitSet, error) {
	out := ev.bits()
	for _, k := range n {
		if err := ev.cancelled(); err != nil {
			return nil, err
		}
		m, err := k.match(ev, scored)
		if err != nil {
			return nil, err
		}
		out.InPlaceUnion(m)
		ev.recycle(m)
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
		if err := ev.cancelled(); err != nil {
			return nil, err
		}
		m, err := k.match(ev, scored)
		if err != nil {
			return nil, err
		}
		if out == nil {
			out = m
		} else {
			out.InPlaceIntersection(m)
			ev.recycle(m)
		}
	}
	if len(n.should) > 0 {
		any, err := anyNode(n.should).match(ev, scored)
		if err != nil {
			return nil, err
		}
		if out == nil {
			out = any
		} else {
			ev.recycle(any) // matched for its scores only
		}
	}
	if out == nil {
		out = ev.liveSet()
	}
	for _, k := range n.mustNot {
		m, err := k.match(ev, false)
		if err != nil {
			return nil, err
		}
		out.InPlaceDifference(m)
		ev.recycle(m)
	}
	return out, nil
}

// allNode matches every live chunk.
type allNode struct{}

func (allNode) match(ev *eval, _ bool) (*bitset.BitSet, error) { return ev.liveSet(), nil }

// noneNode matches nothing.
type noneNode struct{}

func (noneNode) match(ev *eval, _ bool) (*bitset.BitSet, error) {
	return ev.bits(), nil
}

// visitStored visits the stored fields of a chunk; visit may keep the
// values, which are in a when it is not nil.
func (e *engine) visitStored(doc uint64, a *arena, visit segment.StoredFieldVisitor) error {
	s := e.segOf(doc)
	return s.stored.visit(doc-s.base, a, visit)
}
