package query

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	mathbits "math/bits"
	"path/filepath"
	"slices"

	"github.com/kbqdev/kbq/artifact"
	"github.com/kbqdev/kbq/internal/mmap"
)

// Search modes: which channels find results.
const (
	// ModeHybrid fuses the lexical and semantic rankings (reciprocal rank
	// fusion); the default when the artifact has vectors.
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
// nDCG@10 0.7337 fused by scaled scores at 0.4, against 0.7151 by
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

// vectors maps the index's vectors file, once.
func (ix *Index) vectors() (*artifact.Vectors, error) {
	ix.vecOnce.Do(func() {
		if ix.Manifest.Embeddings == nil {
			ix.vecErr = ErrNoVectors
			return
		}
		data, unmap, err := mmap.Map(filepath.Join(ix.Dir, ix.Manifest.Index, artifact.VectorsFile))
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
			ix.vecErr = err
			return
		}
		ix.vecs, ix.vecUnmap = v, unmap
	})
	return ix.vecs, ix.vecErr
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
func (ix *Index) semanticTop(req Request, selected bool, q []float32, k int, perChunk bool) ([]scoredDoc, int, error) {
	vecs, err := ix.vectors()
	if err != nil {
		return nil, 0, err
	}
	if len(q) != vecs.Dims {
		return nil, 0, fmt.Errorf("the query's vector has %d values, the artifact's %d", len(q), vecs.Dims)
	}
	docs, err := ix.Documents()
	if err != nil {
		return nil, 0, err
	}
	var root node = allNode{}
	if must, mustNot := ix.filters(req, selected); len(must)+len(mustNot) > 0 {
		root = boolNode{must: append([]node{allNode{}}, must...), mustNot: mustNot}
	}
	ev := ix.engine.newEval(ix.ranking, ix.Manifest.Fields, ix.Manifest.Counts.Chunks)
	inForce, err := root.match(ev, false)
	if err != nil {
		return nil, 0, err
	}
	base := make(map[uint64]uint64, len(ix.engine.segs))
	for _, s := range ix.engine.segs {
		base[s.id] = s.base
	}
	// each calls f with every chunk in force: its document's index, its
	// global number and its row, document by document.
	each := func(f func(doc int, g uint64, row int)) error {
		row := 0
		for di, d := range docs {
			first, ok := base[d.Seg]
			if !ok {
				return fmt.Errorf("%w: %s lies in segment %d, which the index lacks", artifact.ErrCorrupt, d.Path, d.Seg)
			}
			first += uint64(d.Doc)
			for i := range d.Chunks {
				if g := first + uint64(i); inForce.Test(uint(g)) {
					f(di, g, row+i)
				}
			}
			row += d.Chunks
		}
		return nil
	}

	// The bits choose the candidates: those within the Hamming distance
	// that holds enough of them.
	candidate := func(row int) bool { return true }
	if want := max(semanticCandidates, 40*k); vecs.HasBits() {
		qbits := artifact.AppendBits(nil, q)
		dist := ix.distances(vecs.Count)
		defer ix.distPool.Put(dist)
		hist := make([]int32, vecs.Dims+1)
		inForceCount := 0
		err := each(func(_ int, _ uint64, row int) {
			bits := vecs.Bits(row)
			d := 0
			for w, qw := range qbits {
				d += mathbits.OnesCount64(qw ^ binary.LittleEndian.Uint64(bits[8*w:]))
			}
			(*dist)[row] = uint16(d)
			hist[d]++
			inForceCount++
		})
		if err != nil {
			return nil, 0, err
		}
		if inForceCount > want {
			limit, room := 0, int32(want)
			for ; room > hist[limit]; limit++ {
				room -= hist[limit]
			}
			candidate = func(row int) bool {
				switch d := int((*dist)[row]); {
				case d < limit:
					return true
				case d == limit && room > 0:
					room--
					return true
				}
				return false
			}
		}
	}

	var top []scoredDoc
	worst := func() float64 { return top[len(top)-1].score }
	offer := func(d scoredDoc) {
		if len(top) == k && d.score <= worst() {
			return
		}
		i, _ := slices.BinarySearchFunc(top, d, func(a, b scoredDoc) int { return cmp.Compare(b.score, a.score) })
		top = slices.Insert(top, i, d)
		if len(top) > k {
			top = top[:k]
		}
	}
	compared, bestDoc := 0, -1
	best := scoredDoc{score: -2}
	flush := func() {
		if best.score > -2 {
			offer(best)
		}
		best = scoredDoc{score: -2}
	}
	err = each(func(doc int, g uint64, row int) {
		compared++
		if !candidate(row) {
			return
		}
		s := scoredDoc{doc: g, score: float64(vecs.Dot(q, row))}
		if perChunk {
			offer(s)
			return
		}
		if doc != bestDoc {
			flush()
			bestDoc = doc
		}
		if s.score > best.score {
			best = s
		}
	})
	if err != nil {
		return nil, 0, err
	}
	flush()
	return top, compared, nil
}

// distances is a buffer of n Hamming distances, for one search.
func (ix *Index) distances(n int) *[]uint16 {
	if d, ok := ix.distPool.Get().(*[]uint16); ok && len(*d) >= n {
		return d
	}
	d := make([]uint16, n)
	return &d
}

// searchSemantic answers req from the vectors alone.
func (ix *Index) searchSemantic(req Request, selected bool, k int) (*Response, error) {
	top, compared, err := ix.semanticTop(req, selected, req.Vector, k, req.Chunks)
	if err != nil {
		return nil, err
	}
	hits, err := ix.hits(top)
	if err != nil {
		return nil, err
	}
	resp := &Response{Query: req.Query, Total: compared, TotalExact: true, Results: make([]Result, 0, len(hits))}
	for _, h := range hits {
		if h.Tags == nil {
			h.Tags = []string{}
		}
		h.Channels = []string{ModeSemantic}
		resp.Results = append(resp.Results, h.Result)
	}
	return resp, nil
}

// searchHybrid fuses the lexical and semantic rankings of req by
// reciprocal rank: each result scores the sum of 1/(60 + its rank) over
// the channels that found it. A document both found shows the lexical
// channel's chunk, whose words matched.
func (ix *Index) searchHybrid(ctx context.Context, req Request, selected bool) (*Response, error) {
	lexReq := req
	lexReq.Mode, lexReq.N, lexReq.MaxTokens = ModeLexical, max(req.N, fusionDepth), 1<<30
	lex, err := ix.Search(ctx, lexReq)
	if err != nil {
		return nil, err
	}
	sem, err := ix.searchSemantic(req, selected, max(req.N, fusionDepth))
	if err != nil {
		return nil, err
	}
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
	w := cmp.Or(ix.ranking.SemanticWeight, DefaultSemanticWeight)
	fusion := cmp.Or(ix.ranking.Fusion, DefaultFusion)
	byKey := map[string]*fused{}
	var all []*fused
	for c, channel := range []*Response{lex, sem} {
		weight := 1 - w
		if c == 1 {
			weight = w
		}
		lo, hi := 0.0, 0.0
		if n := len(channel.Results); n > 0 {
			hi, lo = channel.Results[0].Score, channel.Results[n-1].Score
		}
		for rank, r := range channel.Results {
			f, ok := byKey[key(r)]
			if !ok {
				f = &fused{Result: r}
				f.Channels = nil
				byKey[key(r)] = f
				all = append(all, f)
			}
			switch fusion {
			case FusionConvex:
				if hi > lo {
					f.score += weight * (r.Score - lo) / (hi - lo)
				} else {
					f.score += weight
				}
			default:
				f.score += 2 * weight / float64(rrfK+rank+1)
			}
			f.Channels = append(f.Channels, r.Channels...)
		}
	}
	slices.SortStableFunc(all, func(a, b *fused) int {
		return cmp.Or(cmp.Compare(b.score, a.score), cmp.Compare(b.depth, a.depth), cmp.Compare(a.Path, b.Path))
	})
	resp := &Response{Query: req.Query, Total: lex.Total, TotalExact: lex.TotalExact, Notes: lex.Notes, Results: []Result{}}
	for _, f := range all[:min(len(all), req.N)] {
		f.Result.Score = f.score
		resp.Results = append(resp.Results, f.Result)
	}
	return resp, nil
}
