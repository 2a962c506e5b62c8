package query

import (
	"fmt"
	"math"
	"slices"

	"github.com/bits-and-blooms/bitset"

	"github.com/kbqdev/kbq/artifact"
	"github.com/kbqdev/kbq/artifact/iceread"
	"github.com/kbqdev/kbq/artifact/postings"
)

// Top-k evaluation scores chunks document at a time and skips those that
// cannot reach the k best, as Lucene's block-max MaxScore does (Turtle and
// Flood, "Query evaluation: strategies and optimizations", 1995; Ding and
// Suel, "Faster top-k document retrieval using block-max indexes", 2011).
// Each term's postings carry, per block of 128 chunks, bounds from which
// the best score any chunk of the block can reach follows. Terms whose
// bounds together cannot beat the k-th best score so far only add to the
// scores of chunks the other terms find; a window of chunks whose block
// bounds add up to less is skipped whole. Scores are added in the order
// the term-at-a-time engine adds them, so both give the same numbers.

// topQuery is a query in the shape top-k evaluation handles: scored terms
// that are required (must) or optional (should, at least one of which must
// match when there are no required terms), each searched in every text
// field, and constraints that do not score, as sets of chunks.
type topQuery struct {
	terms   []topTerm      // in the order the term-at-a-time engine scores them
	must    int            // terms with required set
	filter  *bitset.BitSet // chunks allowed; nil: all
	exclude *bitset.BitSet // chunks excluded; nil: none
	// facets are required keyword terms (kind:, tag: and the like), each
	// checked on the chunks the terms find rather than read whole: a
	// filter most chunks meet would otherwise cost its every posting.
	facets []termNode
	// without are excluded words (-word), each checked on the chunks the
	// terms find, as facets are.
	without []textNode
	any     bool // the should terms are alternatives, one required
}

// topTerm is a scored term of a topQuery.
type topTerm struct {
	node     textNode
	required bool
	sc       termScorer
	idf      float64 // times included

	// Per segment:
	it       postings.Iterator
	present  bool
	max      float64 // bound of the whole list
	hasBlock bool    // last and blockMax describe a block
	last     uint32  // last chunk of the block bounded by blockMax
	blockMax float64
	c        float64 // contribution to the current chunk
}

// compileTop turns a query's node into a topQuery, or reports that it has
// another shape: phrases among optional clauses, optional or alternative
// prefixes, fields other than all, queries without scored terms.
func (ev *eval) compileTop(root node) (*topQuery, bool, error) {
	r := ev.ranking
	if r.K1 <= 0 || r.B < 0 || r.B > 1 {
		return nil, false, nil
	}
	c := &topCompiler{ev: ev, q: &topQuery{}}
	if !c.required(root) || c.err != nil || len(c.q.terms) == 0 {
		return nil, false, c.err
	}
	q := c.q
	for i := range q.terms {
		t := &q.terms[i]
		t.sc = ev.termScorer(t.node)
		for _, w := range t.sc.w {
			if w < 0 {
				return nil, false, nil
			}
		}
		n, err := ev.liveDFIn(t.node)
		if err != nil {
			return nil, false, err
		}
		t.idf = t.node.times * IDF(ev.df(t.node, n), ev.chunks)
		ev.noteIDF(t.node.term, t.idf)
		if t.required {
			q.must++
		}
	}
	if q.any == (q.must > 0) {
		// Optional terms beside unscored constraints alone, or alternatives
		// beside required terms: the general path evaluates those.
		return nil, false, nil
	}
	return q, true, nil
}

type topCompiler struct {
	ev  *eval
	q   *topQuery
	err error
}

// required adds a node every result must match.
func (c *topCompiler) required(n node) bool {
	switch n := n.(type) {
	case textNode:
		c.q.terms = append(c.q.terms, topTerm{node: n, required: true})
		return true
	case allNode:
		return true
	case termNode:
		c.q.facets = append(c.q.facets, n)
		return true
	case boolNode:
		for _, m := range n.must {
			if !c.required(m) {
				return false
			}
		}
		if len(n.should) > 0 {
			if len(n.must) == 0 {
				if c.q.any {
					return false // two sets of alternatives
				}
				c.q.any = true
			}
			for _, s := range n.should {
				if !c.optional(s) {
					return false
				}
			}
		}
		for _, x := range n.mustNot {
			if b, ok := x.(boolNode); ok && len(b.must) == 1 && len(b.should)+len(b.mustNot) == 0 {
				x = b.must[0] // -word: one word's term
			}
			if t, ok := x.(textNode); ok {
				c.q.without = append(c.q.without, t)
				continue
			}
			c.unscored(x, &c.q.exclude, (*bitset.BitSet).InPlaceUnion)
		}
		return c.err == nil
	}
	if scored(n) {
		return false
	}
	c.unscored(n, &c.q.filter, (*bitset.BitSet).InPlaceIntersection)
	return c.err == nil
}

// optional adds a scored node results need not match.
func (c *topCompiler) optional(n node) bool {
	switch n := n.(type) {
	case textNode:
		c.q.terms = append(c.q.terms, topTerm{node: n})
		return true
	case anyNode:
		for _, k := range n {
			if !c.optional(k) {
				return false
			}
		}
		return true
	case expandNode:
		if !n.text {
			return false
		}
		terms, err := n.expand(c.ev)
		if err != nil {
			c.err = err
			return false
		}
		for _, t := range terms {
			if !c.optional(newTextNode(t, n.fields, c.ev.ranking)) {
				return false
			}
		}
		return true
	}
	return false
}

// unscored evaluates a node that does not score into *set, combined with
// what is there by op.
func (c *topCompiler) unscored(n node, set **bitset.BitSet, op func(*bitset.BitSet, *bitset.BitSet)) {
	m, err := n.match(c.ev, false)
	if err != nil {
		c.err = err
		return
	}
	if *set == nil {
		*set = m
		return
	}
	op(*set, m)
	c.ev.recycle(m)
}

// scored reports whether a node scores chunks.
func scored(n node) bool {
	switch n := n.(type) {
	case textNode:
		return true
	case expandNode:
		return n.text
	case anyNode:
		return slices.ContainsFunc(n, scored)
	case boolNode:
		return slices.ContainsFunc(n.must, scored) || slices.ContainsFunc(n.should, scored)
	}
	return false
}

// liveDFIn counts the live chunks holding n's term in n's fields, in
// every segment: from the lists' lengths when n searches every field,
// else by walking them.
func (ev *eval) liveDFIn(n textNode) (uint64, error) {
	if n.allFields() {
		return ev.liveDF(n.term)
	}
	var count uint64
	var it postings.Iterator
	for _, s := range ev.e.segs {
		p, ok, err := s.text.Lookup([]byte(n.term))
		if err != nil {
			return 0, err
		}
		if !ok {
			continue
		}
		it.Reset(p, s.text.Docs())
		it.Only(n.in)
		for d := it.Next(); d != postings.NoMore; d = it.Next() {
			if ev.e.live.Test(uint(s.base + uint64(d))) {
				count++
			}
		}
		if err := it.Err(); err != nil {
			return 0, err
		}
	}
	return count, nil
}

// liveDF counts the live chunks holding term, in every segment.
func (ev *eval) liveDF(term string) (uint64, error) {
	var n uint64
	var it postings.Iterator
	for _, s := range ev.e.segs {
		p, ok, err := s.text.Lookup([]byte(term))
		if err != nil {
			return 0, err
		}
		if !ok {
			continue
		}
		n += uint64(p.DF)
		if s.deleted == nil {
			continue
		}
		it.Reset(p, s.text.Docs())
		del := s.deleted.Iterator()
		for del.HasNext() {
			d := del.Next()
			if it.Advance(d) == d {
				n--
			}
		}
		if err := it.Err(); err != nil {
			return 0, err
		}
	}
	return n, nil
}

// topResult is what top-k evaluation found.
type topResult struct {
	hits []scoredDoc
	// matched counts the matching chunks seen; exact is false when chunks
	// were skipped, and matched is then a lower bound.
	matched int
	exact   bool
}

// run finds the k best chunks, and those tied with the k-th; with
// perDocument, the best chunk of each of the k best documents.
func (q *topQuery) run(ev *eval, k int, perDocument bool) (topResult, error) {
	col := topCollector{k: k}
	res := topResult{exact: true}
	for _, s := range ev.e.segs {
		if err := q.runSegment(ev, s, &col, &res, perDocument); err != nil {
			return topResult{}, err
		}
	}
	res.hits = col.result()
	return res, nil
}

// margin keeps rounding from pruning a chunk whose bound, added in another
// order, came out a hair below its score.
const margin = 1 + 1e-9

func (q *topQuery) runSegment(ev *eval, s seg, col *topCollector, res *topResult, perDocument bool) error {
	k1 := ev.ranking.K1
	fmax := 1.0
	if s.text.HasFactors() {
		fmax = maxFactor
	}
	docs := s.text.Docs()
	var live []*topTerm // present in this segment
	for i := range q.terms {
		t := &q.terms[i]
		p, ok, err := s.text.Lookup([]byte(t.node.term))
		if err != nil {
			return err
		}
		t.present = ok
		if !ok {
			if t.required {
				return nil // no chunk of this segment holds it
			}
			continue
		}
		t.it.Reset(p, docs)
		if !t.node.allFields() {
			t.it.Only(t.node.in)
		}
		t.max = t.idf * saturate(t.sc.bound(&p.Max), k1) * margin
		t.hasBlock = false
		live = append(live, t)
	}
	if len(live) == 0 {
		return nil
	}
	e := evalSegment{q: q, ev: ev, s: s, col: col, res: res, terms: live, fmax: fmax, k1: k1, perDocument: perDocument}
	for _, f := range q.facets {
		pl, err := s.Dictionary(f.field).Postings([]byte(f.term), s.deleted)
		if err != nil {
			return fmt.Errorf("read postings of %s:%s: %w", f.field, f.term, err)
		}
		if pl.Count() == 0 {
			return nil // no chunk of this segment meets it
		}
		e.facets = append(e.facets, facetCursor{it: pl.Iterator(), term: f})
	}
	for _, w := range q.without {
		p, ok, err := s.text.Lookup([]byte(w.term))
		if err != nil {
			return err
		}
		if ok {
			x := &exclusion{sc: ev.termScorer(w)}
			x.it.Reset(p, docs)
			e.without = append(e.without, x)
		}
	}
	var err error
	if q.must > 0 {
		err = e.conjunction()
	} else {
		err = e.disjunction()
	}
	e.flush()
	return err
}

// facetCursor walks a required keyword term's postings in a segment as
// the chunks to check come, in ascending order.
type facetCursor struct {
	it   *iceread.Iterator
	term termNode
	at   uint64 // the posting it is on; past every chunk when done
	read bool   // it has moved at all
}

// holds reports whether chunk doc, at or after the last asked, holds the
// term.
func (f *facetCursor) holds(doc uint64) bool {
	if !f.read || f.at < doc {
		f.read = true
		var ok bool
		if f.at, ok = f.it.Advance(doc); !ok {
			f.at = math.MaxUint64
		}
	}
	return f.at == doc
}

// maxFactor bounds the score factor importance gives.
var maxFactor = artifact.ImportanceFactor(1) * margin

type evalSegment struct {
	q     *topQuery
	ev    *eval
	s     seg
	col   *topCollector
	res   *topResult
	terms []*topTerm
	fmax  float64
	k1    float64

	// With perDocument, the best chunk so far of the document the last
	// chunk scored belongs to, offered once the document is done: its
	// chunks are consecutive.
	perDocument bool
	pending     scoredDoc
	pendingLast uint32 // the last chunk of it scored
	hasPending  bool

	facets  []facetCursor // the query's facets in this segment
	without []*exclusion  // the excluded words this segment holds
}

// exclusion is an excluded word's postings in a segment.
type exclusion struct {
	it postings.Iterator
	sc termScorer
}

// exactTotals is how many matches are counted before chunks are skipped,
// as Lucene's TopScoreDocCollector does: totals up to it are exact.
var exactTotals = 1000

// full reports whether chunks may be skipped: the collector holds k and
// enough matches were counted.
func (e *evalSegment) full() bool { return e.col.full() && e.res.matched >= exactTotals }

// threshold is the score a chunk needs, -Inf while nothing may be skipped:
// the k-th best so far, or the bar a Union's other artifacts have set if
// that is higher.
func (e *evalSegment) threshold() float64 {
	θ := math.Inf(-1)
	if e.full() {
		θ = e.col.threshold()
	}
	if ev := e.ev; ev.hasBar && ev.bar > θ && e.res.matched+ev.counted >= exactTotals {
		θ = ev.bar
	}
	return θ
}

// offer offers a scored chunk to the collector.
func (e *evalSegment) offer(d scoredDoc, chunk uint32) {
	if !e.perDocument {
		e.col.add(d)
		return
	}
	if e.hasPending && e.s.text.SameDocument(e.pendingLast, chunk) {
		if d.score > e.pending.score { // on a tie the earlier chunk wins, as ranking has it
			e.pending = d
		}
		e.pendingLast = chunk
		return
	}
	e.flush()
	e.pending, e.pendingLast, e.hasPending = d, chunk, true
}

// flush offers the pending document's best chunk.
func (e *evalSegment) flush() {
	if e.hasPending {
		e.col.add(e.pending)
		e.hasPending = false
	}
}

// blockBound returns the bound of t's block holding the first chunk at
// or after doc, and the last chunk it covers; 0 and NoMore past its end.
func (e *evalSegment) blockBound(t *topTerm, doc uint32) (float64, uint32) {
	if t.hasBlock && doc <= t.last {
		return t.blockMax, t.last
	}
	t.hasBlock = true
	if !t.it.Shallow(doc) {
		t.last, t.blockMax = postings.NoMore, 0
		return 0, postings.NoMore
	}
	b := t.it.Block()
	t.last, t.blockMax = b.Last, t.idf*saturate(t.sc.bound(b), e.k1)*margin
	return t.blockMax, t.last
}

// allowed reports whether a chunk may be a result, leaving scores aside.
func (e *evalSegment) allowed(doc uint32) bool {
	g := uint(e.s.base + uint64(doc))
	q := e.q
	if !e.ev.e.live.Test(g) || q.filter != nil && !q.filter.Test(g) || q.exclude != nil && q.exclude.Test(g) {
		return false
	}
	for _, x := range e.without {
		if x.it.Advance(doc) == doc {
			if _, ok := x.sc.tf(x.it.Freqs(), e.s.text, doc); ok {
				return false
			}
		}
	}
	for i := range e.facets {
		if !e.facets[i].holds(uint64(doc)) {
			return false
		}
	}
	return true
}

// collect scores a chunk every term that holds it is positioned on, or
// past, and offers it to the collector.
func (e *evalSegment) collect(doc uint32) {
	score := 0.0
	for i := range e.q.terms {
		t := &e.q.terms[i]
		if t.present && t.it.Doc() == doc && t.c > 0 {
			score += t.c
		}
	}
	e.offer(scoredDoc{doc: e.s.base + uint64(doc), score: score * e.s.text.Factor(doc)}, doc)
}

// contribution computes t's contribution to doc, where t is positioned.
func (e *evalSegment) contribution(t *topTerm, doc uint32) {
	tf, _ := t.sc.tf(t.it.Freqs(), e.s.text, doc)
	t.c = 0
	if tf > 0 {
		t.c = t.idf * saturate(tf, e.k1)
	}
}

// disjunction evaluates optional terms, at least one of which matches.
func (e *evalSegment) disjunction() error {
	terms := e.terms
	slices.SortFunc(terms, func(a, b *topTerm) int { return cmpFloat(a.max, b.max) })
	upper := make([]float64, len(terms)) // upper[i]: bound of terms[:i+1]
	sum := 0.0
	for i, t := range terms {
		sum += t.max
		upper[i] = sum
	}
	firstEssential := func(θ float64) int {
		i := 0
		for i < len(terms) && upper[i]*e.fmax < θ {
			i++
		}
		return i
	}
	target := uint32(0) // no chunk before it is left to score
	checked := false    // the window of target was found competitive
	var until uint32    // up to this chunk
	for {
		// The threshold changes only as chunks are scored: once read, it
		// holds until then.
		θ := e.threshold()
		skipping := !math.IsInf(θ, -1)
		ess := firstEssential(θ)
		if ess > 0 {
			e.res.exact = false
		}
		if ess == len(terms) {
			return e.errs()
		}
		// Skip windows where the blocks of all terms cannot compete,
		// reading skip entries only.
		if skipping && (!checked || target > until) {
			var ok bool
			if target, until, ok = e.skipWindows(terms, target); !ok {
				return e.errs()
			}
			checked = true
		}
		doc := uint32(postings.NoMore)
		for _, t := range terms[ess:] {
			doc = min(doc, t.it.Advance(target))
		}
		if doc == postings.NoMore {
			return e.errs()
		}
		if skipping && (!checked || doc > until) {
			target, checked = doc, false // check the window it is in first
			continue
		}
		if e.allowed(doc) {
			e.score(doc, terms, ess)
		}
		target = doc + 1
	}
}

// skipWindows moves target past the windows of chunks where the block
// bounds of terms add up to less than the collector's threshold. It
// returns the new target, the end of its window, and whether any chunk is
// left.
func (e *evalSegment) skipWindows(terms []*topTerm, target uint32) (uint32, uint32, bool) {
	θ := e.threshold()
	for {
		bound, end := e.windowBound(terms, target)
		if bound*e.fmax >= θ {
			return target, end, true
		}
		e.res.exact = false
		if end == postings.NoMore {
			return 0, 0, false
		}
		target = end + 1
	}
}

// windowBound returns the sum of the bounds of terms' blocks holding the
// first chunk at or after doc, and the last chunk all those blocks cover.
func (e *evalSegment) windowBound(terms []*topTerm, doc uint32) (float64, uint32) {
	bound, end := 0.0, uint32(postings.NoMore)
	for _, t := range terms {
		b, last := e.blockBound(t, doc)
		bound += b
		end = min(end, last)
	}
	return bound, end
}

// score scores doc, found by the essential terms terms[ess:], adding the
// others while they can still lift it to the k best.
func (e *evalSegment) score(doc uint32, terms []*topTerm, ess int) {
	e.res.matched++
	partial := 0.0
	for _, t := range terms[ess:] {
		if t.it.Doc() == doc {
			e.contribution(t, doc)
			partial += t.c
		}
	}
	θ := e.threshold()
	if partial, ok := e.addOptional(doc, partial, terms[:ess], θ); ok && partial*e.fmax >= θ {
		e.collect(doc)
	}
}

// addOptional adds to partial, doc's score so far, the contributions of
// the terms in opt (in rising order of bound) holding doc, the largest
// first, while the rest can still lift it past θ, the threshold. It
// reports whether doc can still compete.
func (e *evalSegment) addOptional(doc uint32, partial float64, opt []*topTerm, θ float64) (float64, bool) {
	rest := 0.0
	for _, t := range opt {
		b, _ := e.blockBound(t, doc)
		rest += b
	}
	for i := len(opt) - 1; i >= 0; i-- {
		if (partial+rest)*e.fmax < θ {
			return partial, false
		}
		t := opt[i]
		b, _ := e.blockBound(t, doc)
		rest -= b
		if t.it.Advance(doc) == doc {
			e.contribution(t, doc)
			partial += t.c
		}
	}
	return partial, true
}

// conjunction evaluates required terms, led by the rarest, adding the
// optional ones.
func (e *evalSegment) conjunction() error {
	var req, opt []*topTerm
	for _, t := range e.terms {
		if t.required {
			req = append(req, t)
		} else {
			opt = append(opt, t)
		}
	}
	slices.SortFunc(req, func(a, b *topTerm) int { return a.it.DF() - b.it.DF() })
	slices.SortFunc(opt, func(a, b *topTerm) int { return cmpFloat(a.max, b.max) })
	doc := req[0].it.Next()
	for doc != postings.NoMore {
		// Leapfrog until every required term is on doc.
		agreed := true
		for _, t := range req[1:] {
			if d := t.it.Advance(doc); d != doc {
				doc = req[0].it.Advance(d)
				agreed = false
				break
			}
		}
		if !agreed {
			continue
		}
		if θ := e.threshold(); !math.IsInf(θ, -1) {
			if bound, end := e.windowBound(e.terms, doc); bound*e.fmax < θ {
				e.res.exact = false
				if end == postings.NoMore {
					break
				}
				doc = req[0].it.Advance(end + 1)
				continue
			}
		}
		if e.allowed(doc) {
			e.res.matched++
			partial := 0.0
			for _, t := range req {
				e.contribution(t, doc)
				partial += t.c
			}
			if _, ok := e.addOptional(doc, partial, opt, e.threshold()); ok {
				e.collect(doc)
			}
		}
		doc = req[0].it.Next()
	}
	return e.errs()
}

func (e *evalSegment) errs() error {
	for _, t := range e.terms {
		if err := t.it.Err(); err != nil {
			return err
		}
	}
	for _, x := range e.without {
		if err := x.it.Err(); err != nil {
			return err
		}
	}
	return nil
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
