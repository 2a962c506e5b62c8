package query

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/bits-and-blooms/bitset"

	"github.com/kbqdev/kbq/artifact"
	"github.com/kbqdev/kbq/internal/mmap"
	"github.com/kbqdev/kbq/knowledge"
)

// Search modes: which channels find results.
const (
	// ModeHybrid fuses the lexical and semantic rankings (DefaultFusion);
	// the default when the artifact has vectors.
	ModeHybrid = "hybrid"
	// ModeLexical ranks by words alone (BM25F).
	ModeLexical = "lexical"
	// ModeSemantic ranks by the cosine of the query's vector with each
	// chunk's.
	ModeSemantic = "semantic"
)

// Modes lists the search modes.
var Modes = []string{ModeHybrid, ModeLexical, ModeSemantic}

// Ways to fuse the lexical and semantic rankings.
const (
	// FusionRRF is reciprocal rank fusion: a result ranked r-th in a
	// channel scores w/(60 + r) from it, w the channel's weight.
	FusionRRF = "rrf"
	// FusionConvex adds the channels' scores, each scaled to 0–1 over its
	// ranking (min-max), in proportion to their weights.
	FusionConvex = "convex"
)

// Defaults of hybrid ranking, chosen on SciFact's training queries:
// nDCG@10 0.7337 fused by scaled scores at 0.4, against 0.7189 by
// reciprocal rank with equal weights (lexical alone: 0.7027).
const (
	DefaultFusion         = FusionConvex
	DefaultSemanticWeight = 0.4
)

// rrfK is reciprocal rank fusion's constant.
const rrfK = 60

// fusionDepth is how deep each channel's ranking goes into the fusion.
const fusionDepth = 50

// ErrNoVectors means a search needs vectors the artifact does not have.
var ErrNoVectors = errors.New("the artifact has no vectors")

// Mode is the mode a request runs in: its own, or hybrid when the artifact
// has vectors and lexical when it has none.
func (ix *Index) Mode(req Request) string {
	if req.Mode != "" {
		return req.Mode
	}
	if ix.Manifest.Embeddings != nil {
		return ModeHybrid
	}
	return ModeLexical
}

// Models returns the model of the artifact's vectors, none without.
func (ix *Index) Models() []artifact.Embeddings {
	if e := ix.Manifest.Embeddings; e != nil {
		return []artifact.Embeddings{*e}
	}
	return nil
}

// vectors maps the index's vectors file, once.
func (ix *Index) vectors() (*artifact.Vectors, error) {
	ix.vecOnce.Do(func() {
		if ix.Manifest.Embeddings == nil {
			ix.vecErr = ErrNoVectors
			return
		}
		data, unmap, err := mmap.MapWhole(filepath.Join(ix.Dir, ix.Manifest.Index, artifact.VectorsFile))
		if err != nil {
			ix.vecErr = fmt.Errorf("open vectors: %w", err)
			return
		}
		v, err := artifact.ParseVectors(data)
		if err == nil && (v.Dims != ix.Manifest.Embeddings.Dims || v.Count != ix.Manifest.Counts.Chunks) {
			err = fmt.Errorf("%w: %d vectors of %d values for %d chunks of %d", artifact.ErrCorrupt, v.Count, v.Dims, ix.Manifest.Counts.Chunks, ix.Manifest.Embeddings.Dims)
		}
		if err != nil {
			unmap()
			if !errors.Is(err, artifact.ErrCorrupt) {
				err = fmt.Errorf("%w: %v", artifact.ErrCorrupt, err)
			}
			ix.vecErr = fmt.Errorf("%s: %w: rebuild the artifact with kbc build", ix.Manifest.Index+"/"+artifact.VectorsFile, err)
			return
		}
		ix.vecs, ix.vecUnmap = v, unmap
	})
	return ix.vecs, ix.vecErr
}

// warmRows is the most bytes of stored vectors warmSemantic reads ahead:
// about 42,000 chunks at 384 dimensions, read in some 10 ms on the 2-core
// machine while a query is embedded. Beyond that, the candidates a query
// ranks lie on a small share of the pages, which it reads itself.
const warmRows = 16 << 20

// warmSemantic readies, once, what ranking by vectors needs besides the
// query's vector, for a search to do while the vector is made: the
// vectors mapped, the row map, and a byte of every page of the bits and
// of the stored vectors read. A process pays for each page of a mapping
// the first time it reads one: at 23,000 chunks, most of the 7 ms the
// semantic ranking took in a fresh process, against about 1 ms with the
// pages read ahead. Errors are left to the ranking, which meets them
// again.
func (ix *Index) warmSemantic() {
	ix.warmOnce.Do(func() {
		vecs, err := ix.vectors()
		if err != nil {
			return
		}
		if _, err := ix.rowMap(vecs); err != nil {
			return
		}
		ix.distPool.Put(ix.distances(vecs.Count))
		mmap.Touch(vecs.AllBits())
		if size := 4 + vecs.Dims; vecs.Count*size <= warmRows {
			for i := 0; i < vecs.Count; i += max(1, mmap.PageSize/size) {
				mmap.Touch(vecs.Row(i)[:1])
			}
		}
	})
}

// semanticCandidates is how many chunks, at least, the vectors' bits
// choose for the stored vectors to rank; 40 per result asked for beyond
// that. On SciFact's training queries (bench/quantcmp), the 2000 chosen
// by bits ranked as all 5183 vectors do (nDCG@10 0.6602, recall@100
// 0.9324); 1000 lost 0.0012 of recall@100.
var semanticCandidates = 2000

// semanticTop returns the k chunks in force whose vectors are nearest q,
// each document's best only unless perChunk, and how many were compared.
// Filters, scopes and shadowing choose the chunks before any is ranked,
// so a scoped search never loses results to chunks outside its scope.
//
// Every chunk in force is compared, first by the Hamming distance of its
// sign bits to the query's, 48 bytes a chunk for 384 dimensions, then the
// nearest by their stored vectors: exact for artifacts without bits, and
// fast enough either way at a few hundred thousand chunks; far beyond,
// an approximate index would pay.
func (ix *Index) semanticTop(req Request, selected bool, cons constraints, q []float32, k int, perChunk bool) ([]scoredDoc, int, error) {
	vecs, err := ix.vectors()
	if err != nil {
		return nil, 0, err
	}
	if len(q) != vecs.Dims {
		return nil, 0, fmt.Errorf("the query's vector has %d values, the artifact's %d", len(q), vecs.Dims)
	}
	rows, err := ix.rowMap(vecs)
	if err != nil {
		return nil, 0, err
	}
	var root node = allNode{}
	must, mustNot := ix.filters(req, selected)
	must, mustNot = append(must, cons.must...), append(mustNot, cons.mustNot...)
	if len(must)+len(mustNot) > 0 {
		root = boolNode{must: append([]node{allNode{}}, must...), mustNot: mustNot}
	}
	ev := ix.engine.newEval(ix.ranking, ix.Manifest.Fields, ix.Manifest.Counts.Chunks)
	inForce, err := root.match(ev, false)
	if err != nil {
		return nil, 0, err
	}

	// The distance of every row: notInForce, or the Hamming distance of
	// its bits to the query's (0 for all when the file has no bits).
	dist := ix.distances(vecs.Count)
	defer ix.distPool.Put(dist)
	hist, compared := scanBits(vecs, rows, inForce, artifact.AppendBits(nil, q), *dist)

	// The candidates: every row within the distance that holds enough of
	// them, and as many at that distance as there is room for, in order.
	want := max(semanticCandidates, 40*k)
	limit, room := len(hist)-1, int32(compared)
	if vecs.HasBits() && compared > want {
		limit, room = 0, int32(want)
		for ; room > hist[limit]; limit++ {
			room -= hist[limit]
		}
	}

	var top []scoredDoc
	offer := func(d scoredDoc) {
		if len(top) == k && d.score <= top[len(top)-1].score {
			return
		}
		i, _ := slices.BinarySearchFunc(top, d, func(a, b scoredDoc) int { return cmp.Compare(b.score, a.score) })
		top = slices.Insert(top, i, d)
		if len(top) > k {
			top = top[:k]
		}
	}
	// They are ranked by their stored vectors in one batch, then each
	// document's best is offered.
	cands := candidatePool.Get().(*candidateRows)
	defer candidatePool.Put(cands)
	cands.rows = cands.rows[:0]
	for row, d := range (*dist)[:vecs.Count] {
		switch {
		case int(d) < limit:
		case int(d) == limit && room > 0:
			room--
		default:
			continue
		}
		cands.rows = append(cands.rows, int32(row))
	}
	cands.scores = slices.Grow(cands.scores[:0], len(cands.rows))[:len(cands.rows)]
	vecs.DotRows(q, cands.rows, cands.scores)
	best, bestDoc := scoredDoc{score: -2}, uint32(0)
	doc := uint32(0) // the candidates' rows ascend, and so do their documents
	if len(cands.rows) > 0 {
		doc = rows.docOfRow(int(cands.rows[0]))
	}
	for i, row := range cands.rows {
		for row >= int32(rows.first[doc+1]) {
			doc++
		}
		g := uint64(rows.start[doc]) + uint64(row-int32(rows.first[doc]))
		s := scoredDoc{doc: g, score: float64(cands.scores[i])}
		if perChunk {
			offer(s)
			continue
		}
		if doc != bestDoc {
			if best.score > -2 {
				offer(best)
			}
			best, bestDoc = s, doc
		} else if s.score > best.score {
			best = s
		}
	}
	if !perChunk && best.score > -2 {
		offer(best)
	}
	return top, compared, nil
}

// candidateRows are the rows a search ranks by their stored vectors, and
// their scores.
type candidateRows struct {
	rows   []int32
	scores []float32
}

var candidatePool = sync.Pool{New: func() any { return new(candidateRows) }}

// hybridWords says whether the semantic channel of a hybrid search takes
// the words' results when they are ready (wordsWhenReady), or, for tests,
// waits for them or never takes them: either way the search answers the
// same.
var hybridWords = wordsWhenReady

const (
	wordsWhenReady = iota
	wordsAwaited
	wordsIgnored
)

// byDocument indexes the results of resp that come from ix by the
// document they show, as the vectors' rows number documents; nil for no
// response.
func (ix *Index) byDocument(resp *Response) map[uint32]*Result {
	if resp == nil {
		return nil
	}
	rows := ix.rows // built by semanticTop, which ran first
	found := make(map[uint32]*Result, len(resp.Results))
	for i := range resp.Results {
		if r := &resp.Results[i]; r.ix == ix {
			if doc := rows.docOf(r.doc); doc != noDocument {
				found[doc] = r
			}
		}
	}
	return found
}

// noDocument is docOf's answer for a chunk without a vector.
const noDocument = math.MaxUint32

// docOf returns the index of the document of chunk g, or noDocument.
func (m *rowMap) docOf(g uint64) uint32 {
	row, ok := m.rowOf(g)
	if !ok {
		return noDocument
	}
	return m.docOfRow(row)
}

// count sets dist of each of rows [lo, hi) whose chunk is not in force
// to notInForce, counts the others' distances in hist, and returns how
// many are in force.
func (m *rowMap) count(inForce *bitset.BitSet, lo, hi int, dist []uint16, hist []int32) int {
	n := 0
	for d := m.docOfRow(lo); lo < hi && int(m.first[d]) < hi; d++ {
		from, to := max(int(m.first[d]), lo), min(int(m.first[d+1]), hi)
		g := uint(m.start[d]) + uint(from-int(m.first[d]))
		for row := from; row < to; row, g = row+1, g+1 {
			if !inForce.Test(g) {
				dist[row] = notInForce
				continue
			}
			hist[dist[row]]++
			n++
		}
	}
	return n
}

// notInForce is the distance of a row whose chunk is not in force.
const notInForce = math.MaxUint16

// scanBits sets the distance of every row, notInForce for chunks not in
// force, and returns how many rows are at each distance and how many are
// in force: the distances in one pass over the bits (a POPCNT kernel at
// 384 dimensions: 0.17 ms at 23,000 chunks in Go, 0.07 ms), then which
// chunks are in force. Halves of the rows are scanned side by side beyond
// 128 Ki rows; below, on the caller's goroutine, as starting another one
// cost 25 µs.
func scanBits(vecs *artifact.Vectors, rows *rowMap, inForce *bitset.BitSet, q []uint64, dist []uint16) ([]int32, int) {
	parts := min(runtime.GOMAXPROCS(0), 2, max(vecs.Count/(64<<10), 1))
	hists := make([][]int32, parts)
	counts := make([]int, parts)
	var wg sync.WaitGroup
	for p := range parts {
		lo, hi := vecs.Count*p/parts, vecs.Count*(p+1)/parts
		scan := func() {
			hist := make([]int32, 64*len(q)+1) // damaged padding bits count too
			if vecs.HasBits() {
				vecs.Hamming(q, lo, dist[lo:hi])
			} else {
				clear(dist[lo:hi])
			}
			hists[p], counts[p] = hist, rows.count(inForce, lo, hi, dist, hist)
		}
		if parts == 1 {
			scan() // not worth a goroutine's start
		} else {
			wg.Go(scan)
		}
	}
	wg.Wait()
	hist, n := hists[0], counts[0]
	for p := 1; p < parts; p++ {
		for d, c := range hists[p] {
			hist[d] += c
		}
		n += counts[p]
	}
	return hist, n
}

// rowMap numbers the vectors file's rows by their documents, built once
// per index: the rows of document d are [first[d], first[d+1]), its
// chunks in order from global number start[d] on. byStart lists the
// documents with chunks in the order of their first chunk's number, for
// finding a chunk's row. Three numbers a document rather than three a
// chunk: at 23,000 chunks of 3,088 documents the map took 276 KB, whose
// first touches were most of the 0.35–0.42 ms a fresh process spent
// building it.
type rowMap struct {
	first   []uint32 // a document's first row; one more entry, the rows' count
	start   []uint32 // a document's first chunk's global number
	byStart []uint32 // documents with chunks, by start
}

func (ix *Index) rowMap(vecs *artifact.Vectors) (*rowMap, error) {
	ix.rowsOnce.Do(func() { ix.rows, ix.rowsErr = ix.readRowMap(vecs) })
	return ix.rows, ix.rowsErr
}

func (ix *Index) readRowMap(vecs *artifact.Vectors) (*rowMap, error) {
	places, err := ix.placements(vecs)
	if err != nil {
		return nil, err
	}
	base := make(map[uint64]uint64, len(ix.engine.segs))
	end := uint64(0) // past the last chunk of the index, deleted ones too
	for _, s := range ix.engine.segs {
		base[s.id] = s.base
		end = max(end, s.base+s.Count())
	}
	m := &rowMap{first: make([]uint32, len(places)+1), start: make([]uint32, len(places))}
	rows := 0
	for di, d := range places {
		first, ok := base[d.Seg]
		if !ok {
			return nil, fmt.Errorf("%w: document %d lies in segment %d, which the index lacks", artifact.ErrCorrupt, di, d.Seg)
		}
		first += uint64(d.Doc)
		if first+uint64(d.Chunks) > min(end, math.MaxUint32) {
			return nil, fmt.Errorf("%w: document %d lies past the index's %d chunks", artifact.ErrCorrupt, di, end)
		}
		if rows+int(d.Chunks) > vecs.Count {
			return nil, fmt.Errorf("%w: the documents' chunks outnumber the %d vectors", artifact.ErrCorrupt, vecs.Count)
		}
		m.first[di], m.start[di] = uint32(rows), uint32(first)
		rows += int(d.Chunks)
		if d.Chunks > 0 {
			m.byStart = append(m.byStart, uint32(di))
		}
	}
	if rows != vecs.Count {
		return nil, fmt.Errorf("%w: %d vectors for the documents' %d chunks", artifact.ErrCorrupt, vecs.Count, rows)
	}
	m.first[len(places)] = uint32(rows)
	slices.SortFunc(m.byStart, func(a, b uint32) int { return cmp.Compare(m.start[a], m.start[b]) })
	for i := 1; i < len(m.byStart); i++ {
		if prev, d := m.byStart[i-1], m.byStart[i]; m.start[prev]+m.chunks(prev) > m.start[d] {
			return nil, fmt.Errorf("%w: documents %d and %d share chunks", artifact.ErrCorrupt, prev, d)
		}
	}
	return m, nil
}

// chunks is how many chunks, and rows, document d has.
func (m *rowMap) chunks(d uint32) uint32 { return m.first[d+1] - m.first[d] }

// docOfRow is the document whose rows hold row.
func (m *rowMap) docOfRow(row int) uint32 {
	// The last document whose first row is at most row, past any
	// without rows that begin there too.
	d, _ := slices.BinarySearch(m.first[:len(m.first)-1], uint32(row)+1)
	return uint32(d - 1)
}

// rowOf returns the row of chunk g, false when it has none.
func (m *rowMap) rowOf(g uint64) (int, bool) {
	i, _ := slices.BinarySearchFunc(m.byStart, g, func(d uint32, g uint64) int { return cmp.Compare(uint64(m.start[d]), g+1) })
	if i == 0 {
		return 0, false
	}
	d := m.byStart[i-1]
	if g-uint64(m.start[d]) >= uint64(m.chunks(d)) {
		return 0, false
	}
	return int(m.first[d]) + int(g-uint64(m.start[d])), true
}

// placements locates the chunks of each of the manifest's documents: from
// the vectors file, which a search reads anyway, rather than from the
// manifest's documents, which took 9 ms to read for 3,000 documents.
func (ix *Index) placements(vecs *artifact.Vectors) ([]artifact.Placement, error) {
	var places []artifact.Placement
	if vecs.HasPlacements() {
		places = slices.Collect(vecs.Placements())
	} else {
		docs, err := ix.Documents()
		if err != nil {
			return nil, err
		}
		for _, d := range docs {
			places = append(places, artifact.Placement{Seg: d.Seg, Doc: d.Doc, Chunks: uint32(d.Chunks)})
		}
	}
	chunks := 0
	for _, p := range places {
		chunks += int(p.Chunks)
	}
	if len(places) != ix.Manifest.Counts.Documents || chunks != vecs.Count {
		return nil, fmt.Errorf("%w: the vectors place %d chunks of %d documents, the manifest %d documents", artifact.ErrCorrupt, chunks, len(places), ix.Manifest.Counts.Documents)
	}
	return places, nil
}

// distances is a buffer of n Hamming distances, for one search.
func (ix *Index) distances(n int) *[]uint16 {
	if d, ok := ix.distPool.Get().(*[]uint16); ok && len(*d) >= n {
		return d
	}
	d := make([]uint16, n)
	return &d
}

// searchSemantic answers req from the vectors alone, among the chunks that
// meet the query's constraints: its filters, required and excluded words,
// and required and excluded phrases.
func (ix *Index) searchSemantic(req Request, selected bool, cons constraints, k int) (*Response, error) {
	return ix.searchSemanticBeside(req, selected, cons, k, nil)
}

// searchSemanticBeside is searchSemantic for the semantic channel of a
// hybrid search, whose lexical channel's results lexical returns once
// they are ready (nil before). A document both channels found is shown
// as the lexical channel has it, so the semantic channel gives it its
// score on a copy of that result rather than reading its chunk's stored
// fields: the reads of a warm hybrid search's 50 semantic results, after
// its vector, took 0.14 ms.
func (ix *Index) searchSemanticBeside(req Request, selected bool, cons constraints, k int, lexical func() *Response) (*Response, error) {
	verify := len(cons.pl.phrases)+len(cons.pl.notPhrases) > 0
	want, perChunk := k, req.Chunks
	if verify {
		// Phrases are checked in the chunks' text: take more chunks than
		// needed, each on its own, and keep those that hold them.
		want, perChunk = 8*k+24, true
	}
	top, compared, err := ix.semanticTop(req, selected, cons, req.Vector, want, perChunk)
	if err != nil {
		return nil, err
	}
	var found map[uint32]*Result
	if lexical != nil && !perChunk {
		found = ix.byDocument(lexical())
	}
	a := newArena()
	defer a.release() // the results hold copies
	hits, err := ix.hitsBut(top, found, a)
	if err != nil {
		return nil, err
	}
	if verify {
		an := artifact.NewAnalyzer(ix.Manifest.Analysis)
		seen := make(map[string]bool)
		kept := hits[:0]
		for _, h := range hits {
			if len(kept) == k || seen[h.Path] && !req.Chunks || !cons.pl.phrasesMatch(h.body, h.Title, h.Heading, an) {
				continue
			}
			seen[h.Path] = true
			kept = append(kept, h)
		}
		hits = kept
	}
	resp := &Response{Query: req.Query, Total: compared, TotalExact: true, Results: make([]Result, 0, len(hits))}
	for _, h := range hits {
		if h.found {
			h.Result.Lexical, h.Similarity = 0, h.Score
			h.Channels = []string{ModeSemantic}
			resp.Results = append(resp.Results, h.Result)
			continue
		}
		if h.Tags == nil {
			h.Tags = []string{}
		}
		h.Channels = []string{ModeSemantic}
		h.Content = string(h.body)
		h.Similarity = h.Score
		resp.Results = append(resp.Results, h.Result)
	}
	return resp, nil
}

// searchHybrid fuses the lexical and semantic rankings of req: by their
// scores scaled to 0–1 and weighed (FusionConvex), or by reciprocal rank,
// each result scoring the sum of 1/(60 + its rank) over the channels that
// found it (FusionRRF). A document both found shows the lexical channel's
// chunk, whose words matched.
func (ix *Index) searchHybrid(ctx context.Context, req Request, selected bool, cons constraints) (*Response, error) {
	lexReq := req
	lexReq.Mode, lexReq.N, lexReq.MaxTokens = ModeLexical, max(req.N, fusionDepth), 1<<30
	lexReq.noSnippets = true // the fused results get theirs
	// The channels rank side by side: the words on another goroutine,
	// the query's vector made on this one (the longer path). Whichever
	// goroutine comes to the words first ranks them: one started waits
	// for a core to wake, which in kbq serve took 130 µs at the median
	// and at times longer than the whole search, and the vector, made
	// meanwhile, should not wait for it.
	var sem, lex *Response
	var semErr, err error
	lexDone := make(chan struct{})
	var claimed atomic.Bool
	claim := func() bool { return claimed.CompareAndSwap(false, true) }
	words := func(warm bool) {
		defer close(lexDone)
		defer ix.guard(&err)
		if lex, err = ix.search(ctx, lexReq); err != nil {
			lex = nil
		}
		if warm {
			ix.warmSemantic() // for a first search, while the vector is made
		}
	}
	go func() {
		if claim() {
			words(true)
		}
	}()
	defer func() {
		if claim() {
			close(lexDone) // not begun, and now never
		}
		<-lexDone // the index stays in use until the words are done
	}()
	semReq := req
	if semReq.Vector == nil {
		if semReq.Vector, semErr = req.Embed(ctx); semErr != nil {
			return nil, semErr
		}
	}
	sem, semErr = ix.searchSemanticBeside(semReq, selected, cons, max(req.N, fusionDepth), func() *Response {
		switch hybridWords {
		case wordsAwaited:
			if claim() {
				words(false)
			}
			<-lexDone
		case wordsIgnored:
			return nil
		}
		select {
		case <-lexDone:
			return lex // nil when the words' ranking failed
		default:
			return nil
		}
	})
	if semErr != nil {
		return nil, semErr // words begun are awaited on the way out
	}
	if claim() {
		words(false)
	}
	<-lexDone
	if err != nil {
		return nil, err
	}
	return fuse(req, lex, sem, ix.ranking, func(top Result) (*Response, error) {
		fbReq := lexReq
		if fbReq.Query = ix.feedbackQuery(req.Query, top.Content); fbReq.Query == "" {
			return nil, nil
		}
		return ix.search(ctx, fbReq)
	})
}

// fuse combines the rankings of the words (lex) and of the meaning (sem)
// into req.N results, with ranking's fusion and weights, diversified
// unless req is undiversified. When the first result is a memory,
// feedback, when set, ranks the documents that share its own words
// (feedbackQuery), or returns nil: the second half of an answer in two
// memories (a blocker, then its fix in a later session) shares the
// first's words more than the question's. The memories it ranks gain
// feedbackWeight times their share of those words.
func fuse(req Request, lex, sem *Response, ranking Ranking, feedback func(top Result) (*Response, error)) (*Response, error) {
	type fused struct {
		Result
		score float64
	}
	key := func(r Result) string {
		if req.Chunks {
			return fmt.Sprintf("%s#%d", r.Path, r.chunk)
		}
		return r.Path
	}
	w := cmp.Or(ranking.SemanticWeight, DefaultSemanticWeight)
	fusion := cmp.Or(ranking.Fusion, DefaultFusion)
	byKey := map[string]*fused{}
	var all []*fused
	// add fuses channel in; a feedback channel (skip: the first result's
	// key) only re-ranks the candidates the query's own channels found,
	// which met its filters.
	add := func(channel *Response, weight float64, skip string) {
		lo, hi := 0.0, 0.0
		if n := len(channel.Results); n > 0 {
			hi, lo = channel.Results[0].Score, channel.Results[n-1].Score
		}
		for rank, r := range channel.Results {
			k := key(r)
			if k == skip {
				continue
			}
			f, ok := byKey[k]
			if skip != "" && (!ok || r.Lexical < fairFeedback || r.Kind != knowledge.KindMemory) {
				continue
			}
			if !ok {
				f = &fused{Result: r}
				f.Channels = nil
				byKey[k] = f
				all = append(all, f)
			}
			switch {
			case skip != "":
				f.score += weight * r.Lexical
			case fusion == FusionConvex:
				if hi > lo {
					f.score += weight * (r.Score - lo) / (hi - lo)
				} else {
					f.score += weight
				}
			default:
				f.score += 2 * weight / float64(rrfK+rank+1)
			}
			for _, c := range r.Channels {
				if !slices.Contains(f.Channels, c) {
					f.Channels = append(f.Channels, c)
				}
			}
			if skip == "" {
				f.Lexical, f.Similarity = max(f.Lexical, r.Lexical), max(f.Similarity, r.Similarity)
			} else { // the feedback's words are not the query's
				f.feedback = r.Lexical
			}
		}
	}
	sort := func() {
		slices.SortStableFunc(all, func(a, b *fused) int {
			return cmp.Or(cmp.Compare(b.score, a.score), cmp.Compare(b.depth, a.depth), cmp.Compare(a.Path, b.Path))
		})
	}
	add(lex, 1-w, "")
	add(sem, w, "")
	sort()
	// The first result shown: superseded ones are left out after.
	first := slices.IndexFunc(all, func(f *fused) bool { return req.IncludeSuperseded || !f.retired() })
	if feedback != nil && first >= 0 && all[first].Kind == knowledge.KindMemory {
		fb, err := feedback(all[first].Result)
		if err != nil {
			return nil, err
		}
		if fb != nil {
			add(fb, feedbackWeight, key(all[first].Result))
			sort()
		}
	}
	// A document only the meaning found, less like the question than its
	// model's floor, goes below every strong match by words.
	last := -1
	for i, f := range all {
		if f.Lexical >= strongLexical {
			last = i
		}
	}
	weak := func(f *fused) bool { return f.Lexical == 0 && f.Similarity < f.ix.similarityFloor() }
	if last > 0 && slices.ContainsFunc(all[:last], weak) {
		head := slices.Clone(all[:last+1])
		keep := slices.DeleteFunc(slices.Clone(head), weak)
		head = slices.DeleteFunc(head, func(f *fused) bool { return !weak(f) })
		copy(all, append(keep, head...))
	}
	ranked := make([]Result, len(all))
	for i, f := range all {
		f.Result.Score = f.score
		ranked[i] = f.Result
	}
	if !req.undiversified {
		ranked = diversify(ranked, req.N, ranking.Diversity)
	}
	return &Response{Query: req.Query, Total: lex.Total, TotalExact: lex.TotalExact, Notes: lex.Notes, Results: ranked[:min(len(ranked), req.N)]}, nil
}

// feedbackWeight weighs the feedback channel of a hybrid search against
// the words' and the meaning's, which weigh 1 together: a candidate gains
// it times its share of the feedback query's words. feedbackTerms is how
// many of the first result's words that query takes.
const (
	feedbackWeight = 1.0
	feedbackTerms  = 8
)

// feedbackQuery is a query of the rarest words of text (the first
// result's) that query lacks: up to feedbackTerms of them, rarest first.
func (ix *Index) feedbackQuery(query, text string) string {
	an := artifact.NewAnalyzer(ix.Manifest.Analysis)
	seen := map[string]bool{}
	an.Terms([]byte(query), func(term []byte, _, _ int) { seen[string(term)] = true })
	type word struct {
		text string
		idf  float64
	}
	var words []word
	an.Terms([]byte(text), func(term []byte, start, end int) {
		if seen[string(term)] {
			return
		}
		seen[string(term)] = true
		var df uint64
		for _, s := range ix.engine.segs {
			if p, ok, err := s.text.Lookup(term); err == nil && ok {
				df += uint64(p.DF)
			}
		}
		if df > 0 {
			words = append(words, word{text[start:end], IDF(df, uint64(ix.Manifest.Counts.Chunks))})
		}
	})
	slices.SortStableFunc(words, func(a, b word) int { return cmp.Compare(b.idf, a.idf) })
	var q []string
	for _, w := range words[:min(len(words), feedbackTerms)] {
		q = append(q, w.text)
	}
	return strings.Join(q, " ")
}
