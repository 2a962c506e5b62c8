package query

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/kbqdev/kbq/artifact"
	"github.com/kbqdev/kbq/knowledge"
	"github.com/kbqdev/kbq/query/syntax"
)

// A Union searches several artifacts as one: results are ranked as if
// one artifact had been built from all their documents. BM25 takes the
// union's statistics (live chunks, field lengths, and each term's
// document frequency summed over the artifacts), which a first pass over
// each artifact collects; the second pass ranks each artifact's chunks
// with them, and the artifacts' best are merged. Each result names its
// artifact (Result.Repo), and repo:NAME filters.
//
// The semantic channel compares vectors, which need no statistics: each
// artifact is searched by meaning with the query embedded by its own
// model (Request.Vector for the first of Models, Request.Vectors for the
// others), those without vectors or without the query's vector by their
// words only, with a note; the two channels are then fused once, over the
// union.
type Union struct {
	parts []Part
}

// A Part is one artifact of a Union and the name its results carry.
type Part struct {
	Name  string
	Index *Index
	// Org, above 0, marks an org scope: the organisation's own knowledge,
	// in force in the Union's other artifacts below their own scopes.
	// Its root's scopes are read wherever the query is made from, and a
	// topic that an artifact's scopes in force there hold, or a later org
	// scope's (a higher Org), hides its document of that topic.
	Org int
}

// NewUnion returns the union of parts, whose names must differ and whose
// artifacts must analyze text alike (else their terms could not be
// compared).
func NewUnion(parts []Part) (*Union, error) {
	if len(parts) == 0 {
		return nil, fmt.Errorf("no artifacts to search")
	}
	seen := map[string]bool{}
	for _, p := range parts {
		if p.Name == "" || seen[p.Name] {
			return nil, fmt.Errorf("two artifacts are both named %q: name each repository once", p.Name)
		}
		seen[p.Name] = true
		if a, b := parts[0].Index.Manifest.Analysis, p.Index.Manifest.Analysis; a != b {
			return nil, fmt.Errorf("%s and %s analyze text differently (%s, %s): they cannot be ranked together; build both with the same analysis settings", parts[0].Name, p.Name, a, b)
		}
	}
	return &Union{parts: parts}, nil
}

// Parts returns the artifacts of the union.
func (u *Union) Parts() []Part { return u.parts }

// Parts returns the artifact as a union of one, named "".
func (ix *Index) Parts() []Part { return []Part{{Index: ix}} }

// A ModelVector is a query embedded by one model.
type ModelVector struct {
	Model  artifact.Embeddings
	Vector []float32
}

// Models returns the distinct models the union's artifacts were built
// with, in the order of the artifacts: a query is embedded once by each.
func (u *Union) Models() []artifact.Embeddings {
	var out []artifact.Embeddings
	for _, p := range u.parts {
		if e := p.Index.Manifest.Embeddings; e != nil && !slices.ContainsFunc(out, e.Same) {
			out = append(out, *e)
		}
	}
	return out
}

// Mode is the mode req runs in over the union: hybrid by default when any
// artifact has vectors.
func (u *Union) Mode(req Request) string {
	if req.Mode != "" {
		return req.Mode
	}
	if len(u.Models()) > 0 {
		return ModeHybrid
	}
	return ModeLexical
}

// collection holds the statistics of a Union's search. In the first pass
// record is set, and each artifact notes there the document frequency of
// every term it scores; in the second, df holds their sums.
type collection struct {
	chunks uint64
	fields map[string]artifact.FieldStats
	df     map[string]uint64
	record map[string]uint64
	// bar, in the second pass, holds the best results of the artifacts
	// searched so far.
	bar *unionBar
}

func (c *collection) barOf() *unionBar {
	if c == nil {
		return nil
	}
	return c.bar
}

// A unionBar keeps the scores of the n best results of the artifacts of
// a Union searched so far, and how many matches they counted. An
// artifact searched after them may skip any chunk scoring below the n-th,
// as Lucene's searches of several index slices share their k-th best
// score: such a chunk cannot be among the union's n best. Ties are kept,
// since the order of equal scores is decided by scope, path and
// repository.
type unionBar struct {
	mu      sync.Mutex
	n       int
	best    []float64 // the n best scores, in falling order
	counted int
}

// add records a searched artifact's response.
func (b *unionBar) add(resp *Response) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.counted += resp.Total
	for _, r := range resp.Results {
		i, _ := slices.BinarySearchFunc(b.best, r.Score, func(a, t float64) int { return cmp.Compare(t, a) })
		if i < b.n {
			b.best = slices.Insert(b.best, i, r.Score)[:min(len(b.best)+1, b.n)]
		}
	}
}

// get returns the bar, and whether there is one: n results are in.
func (b *unionBar) get() (score float64, counted int, ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.best) < b.n {
		return 0, b.counted, false
	}
	return b.best[b.n-1], b.counted, true
}

// dfKey names a scored term: its text and the fields it is searched in.
func dfKey(n textNode) string {
	key := make([]byte, 0, len(n.term)+5)
	key = append(key, n.term...)
	key = append(key, 0)
	for _, in := range n.in {
		if in {
			key = append(key, '1')
		} else {
			key = append(key, '0')
		}
	}
	return string(key)
}

// df returns the document frequency the idf of n takes: count, this
// artifact's, unless several artifacts are searched as one.
func (ev *eval) df(n textNode, count uint64) uint64 {
	switch c := ev.coll; {
	case c == nil:
		return count
	case c.record != nil:
		c.record[dfKey(n)] = count
		return count
	}
	return ev.coll.df[dfKey(n)]
}

// scoringEval is the evaluation a search scores with: this artifact's
// statistics, or the union's.
func (ix *Index) scoringEval(c *collection) *eval {
	stats, chunks := ix.Manifest.Fields, ix.Manifest.Counts.Chunks
	if c != nil && c.df != nil {
		stats, chunks = c.fields, int(c.chunks)
	}
	ev := ix.engine.newEval(ix.ranking, stats, chunks)
	ev.coll = c
	return ev
}

// Search runs req over the union. req.Dir applies to every artifact.
func (u *Union) Search(ctx context.Context, req Request) (*Response, error) {
	notes := req.Notes
	req.Notes = nil
	floor := u.parts[0].Index.floorOf(req)
	req.Floor = FloorOff // the union's results clear the floors, not each artifact's
	resp, err := u.search(ctx, req)
	if err == nil {
		applyFloor(resp, floor, u.parts[0].Index.similarityFloor(), u.Mode(req) == ModeHybrid)
	}
	if err == nil && len(notes) > 0 {
		resp.Notes = append(slices.Clone(notes), resp.Notes...)
	}
	return resp, err
}

func (u *Union) search(ctx context.Context, req Request) (*Response, error) {
	parsed := syntax.Parse(req.Query)
	if err := checkFilters(parsed.Clauses); err != nil {
		return nil, err
	}
	parts, err := u.selected(parsed)
	if err != nil {
		return nil, err
	}
	chunks := 0
	for _, p := range parts {
		chunks += p.Index.Manifest.Counts.Chunks
	}
	n, maxTokens := capN(req.N, chunks), cmp.Or(req.MaxTokens, DefaultMaxTokens)
	req.N, req.MaxTokens = n, NoTokenLimit
	if len(parts) == 1 {
		resp, err := parts[0].Index.Search(ctx, req)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", parts[0].Name, err)
		}
		label(resp.Results, parts[0].Name)
		resp.Trimmed = trimToBudget(resp, maxTokens*bytesPerToken)
		return resp, nil
	}
	// Org scopes are in force in one repository read with them; read
	// with several, each is a repository among the others.
	if own := len(parts) - countOrg(parts); own == 1 && own < len(parts) {
		if req.scoped, err = orgScoped(parts, req.Dir); err != nil {
			return nil, err
		}
	}
	mode := (&Union{parts: parts}).Mode(req)
	var resp *Response
	if mode == ModeLexical {
		req.Mode = ModeLexical
		resp, err = u.lexical(ctx, parts, req)
	} else {
		resp, err = u.hybrid(ctx, parts, req, mode)
	}
	if err != nil {
		return nil, err
	}
	resp.Trimmed = trimToBudget(resp, maxTokens*bytesPerToken)
	return resp, nil
}

func countOrg(parts []Part) int {
	n := 0
	for _, p := range parts {
		if p.Org > 0 {
			n++
		}
	}
	return n
}

// orgScoped is how the org scopes among parts are searched from dir: from
// their roots, each without the topics that the other artifacts' scopes
// in force at dir hold, nor those of a later org scope's root.
func orgScoped(parts []Part, dir string) (map[*Index]scopedRequest, error) {
	topics := func(p Part, dir string) (map[string]bool, error) {
		docs, err := p.Index.Documents()
		if err != nil {
			return nil, err
		}
		out := map[string]bool{}
		for _, d := range docs {
			if _, gone := p.Index.Manifest.Retired[d.Path]; !gone && d.Topic != "" && knowledge.ScopeContains(d.Scope, dir) {
				out[d.Topic] = true
			}
		}
		return out, nil
	}
	above := map[string]bool{} // the topics of the artifacts' own scopes in force
	for _, p := range parts {
		if p.Org == 0 {
			t, err := topics(p, dir)
			if err != nil {
				return nil, err
			}
			maps.Copy(above, t)
		}
	}
	out := map[*Index]scopedRequest{}
	for _, p := range parts {
		if p.Org == 0 {
			continue
		}
		hide := maps.Clone(above)
		for _, later := range parts {
			if later.Org > p.Org {
				t, err := topics(later, "")
				if err != nil {
					return nil, err
				}
				maps.Copy(hide, t)
			}
		}
		out[p.Index] = scopedRequest{dir: "", hide: slices.Sorted(maps.Keys(hide))}
	}
	return out, nil
}

// selected returns the parts p's repo: filters leave.
func (u *Union) selected(p syntax.Parsed) ([]Part, error) {
	var want, not []string
	var walk func(cs []syntax.Clause, occur syntax.Occur)
	walk = func(cs []syntax.Clause, occur syntax.Occur) {
		for _, c := range cs {
			o := c.Occur
			if occur == syntax.MustNot {
				o = syntax.MustNot
			}
			switch {
			case c.Kind == syntax.Filter && c.Field == "repo" && o == syntax.MustNot:
				not = append(not, c.Text)
			case c.Kind == syntax.Filter && c.Field == "repo":
				want = append(want, c.Text)
			case c.Kind == syntax.Any:
				walk(c.Sub, o)
			}
		}
	}
	walk(p.Clauses, syntax.Should)
	var names []string
	for _, part := range u.parts {
		names = append(names, part.Name)
	}
	for _, w := range append(slices.Clone(want), not...) {
		if !slices.ContainsFunc(names, func(n string) bool { return strings.EqualFold(n, w) }) {
			return nil, fmt.Errorf("%w: repo:%s names no repository searched (none by that name, or none you may read); searched: %s", ErrUnknownScope, w, strings.Join(names, ", "))
		}
	}
	var out []Part
	for _, part := range u.parts {
		match := func(n string) bool { return strings.EqualFold(n, part.Name) }
		if (len(want) == 0 || slices.ContainsFunc(want, match)) && !slices.ContainsFunc(not, match) {
			out = append(out, part)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: the repo: filters leave no repository to search", ErrUnknownScope)
	}
	return out, nil
}

// lexical ranks req's words over parts with the union's statistics.
func (u *Union) lexical(ctx context.Context, parts []Part, req Request) (*Response, error) {
	c := &collection{fields: map[string]artifact.FieldStats{}, df: map[string]uint64{}}
	for _, p := range parts {
		m := p.Index.Manifest
		c.chunks += uint64(m.Counts.Chunks)
		for f, s := range m.Fields {
			c.fields[f] = c.fields[f].Add(s)
		}
	}
	// First pass: the document frequency of every term scored, in each.
	records := make([]map[string]uint64, len(parts))
	err := each(parts, func(i int, p Part) error {
		first := req
		first.noSnippets = true
		first.coll = &collection{record: map[string]uint64{}}
		records[i] = first.coll.record
		_, err := p.Index.search(ctx, first)
		return err
	})
	if err != nil {
		return nil, err
	}
	for _, r := range records {
		for k, n := range r {
			c.df[k] += n
		}
	}
	// Each artifact ranks its best without snippets; only the union's
	// best get theirs.
	want := !req.noSnippets
	req.coll, req.noSnippets = c, true
	if req.Recency <= 0 { // recency reorders each artifact's results after they are found
		c.bar = &unionBar{n: req.N}
	}
	resp, err := u.merge(ctx, parts, req, func(ix *Index, req Request) (*Response, error) {
		resp, err := ix.Search(ctx, req)
		if err == nil && c.bar != nil {
			c.bar.add(resp)
		}
		return resp, err
	})
	if err == nil && want {
		snippets(parts, resp.Results, req)
	}
	return resp, err
}

// merge runs search on each part and keeps the best of their results, in
// the order one artifact would give them.
func (u *Union) merge(ctx context.Context, parts []Part, req Request, search func(*Index, Request) (*Response, error)) (*Response, error) {
	resp := &Response{Query: req.Query, TotalExact: true, Results: []Result{}}
	found := make([]*Response, len(parts))
	err := each(parts, func(i int, p Part) (err error) {
		found[i], err = search(p.Index, req)
		return err
	})
	if err != nil {
		return nil, err
	}
	for i, p := range parts {
		r := found[i]
		label(r.Results, p.Name)
		resp.Results = append(resp.Results, r.Results...)
		resp.Total += r.Total
		resp.TotalExact = resp.TotalExact && r.TotalExact
		resp.Elsewhere += r.Elsewhere
		for _, note := range r.Notes {
			if !slices.Contains(resp.Notes, note) {
				resp.Notes = append(resp.Notes, note)
			}
		}
	}
	sortResults(resp.Results)
	resp.Results = resp.Results[:min(len(resp.Results), req.N)]
	return resp, nil
}

// sortResults orders results as a search of one artifact does: by score,
// then the deeper scope, then path; then by repository.
func sortResults(results []Result) {
	slices.SortStableFunc(results, func(a, b Result) int {
		return cmp.Or(cmp.Compare(b.Score, a.Score), cmp.Compare(b.depth, a.depth),
			cmp.Compare(a.Path, b.Path), cmp.Compare(a.chunk, b.chunk), cmp.Compare(a.Repo, b.Repo))
	})
}

func label(results []Result, name string) {
	for i := range results {
		results[i].Repo = name
	}
}

// hybrid ranks req over parts by words and by meaning and fuses the two
// rankings of the union. Each artifact is compared with the query's
// vector of its own model; one without vectors, or whose model's vector
// the request lacks, takes part by its words only.
func (u *Union) hybrid(ctx context.Context, parts []Part, req Request, mode string) (*Response, error) {
	models := u.Models()
	if req.Vector == nil && req.Embed != nil && len(models) > 0 && slices.ContainsFunc(parts, func(p Part) bool { return sameModel(p, models[0]) }) {
		v, err := req.Embed(ctx)
		if err != nil {
			return nil, err
		}
		req.Vector, req.Embed = v, nil
	}
	vectorOf := func(p Part) []float32 {
		e := p.Index.Manifest.Embeddings
		if e == nil {
			return nil
		}
		if len(models) > 0 && e.Same(models[0]) && req.Vector != nil {
			return req.Vector
		}
		for _, v := range req.Vectors {
			if e.Same(v.Model) && len(v.Vector) == e.Dims {
				return v.Vector
			}
		}
		return nil
	}
	var meaning []Part
	var odd []string
	for _, p := range parts {
		if vectorOf(p) != nil {
			meaning = append(meaning, p)
		} else {
			odd = append(odd, p.Name)
		}
	}
	if len(meaning) == 0 {
		if mode == ModeSemantic {
			return nil, fmt.Errorf("--mode semantic: %w: none of %s has vectors of a model the query was embedded by", ErrNoVectors, strings.Join(odd, ", "))
		}
		req.Mode = ModeLexical
		resp, err := u.lexical(ctx, parts, req)
		if err == nil && len(models) > 0 {
			resp.Notes = append(resp.Notes, "the query could not be embedded: searched by words only")
		}
		return resp, err
	}
	depth := max(req.N, fusionDepth)
	if mode == ModeSemantic {
		depth = max(depth, diversifyDepth*req.N) // as Index.Search ranks them
	}
	var lex *Response
	if mode != ModeSemantic {
		lexReq := req
		lexReq.Mode, lexReq.N, lexReq.noSnippets = ModeLexical, depth, true
		var err error
		if lex, err = u.lexical(ctx, parts, lexReq); err != nil {
			return nil, err
		}
	}
	semReq := req
	semReq.Mode, semReq.N, semReq.noSnippets, semReq.undiversified = ModeSemantic, depth, true, true
	byIndex := map[*Index][]float32{}
	for _, p := range meaning {
		byIndex[p.Index] = vectorOf(p)
	}
	sem, err := u.merge(ctx, meaning, semReq, func(ix *Index, r Request) (*Response, error) {
		r.Vector, r.Embed, r.Vectors = byIndex[ix], nil, nil
		return ix.Search(ctx, r)
	})
	if err != nil {
		return nil, err
	}
	var resp *Response
	if mode == ModeSemantic {
		sem.Results = diversify(sem.Results, req.N, parts[0].Index.ranking.Diversity)
		resp = sem
	} else {
		ranking := parts[0].Index.ranking
		if resp, err = fuse(req, lex, sem, ranking, func(top Result) (*Response, error) {
			if top.ix == nil {
				return nil, nil
			}
			fbReq := req
			fbReq.Query, fbReq.Mode, fbReq.N, fbReq.noSnippets = top.ix.feedbackQuery(req.Query, top.Content), ModeLexical, depth, true
			if fbReq.Query == "" {
				return nil, nil
			}
			return u.lexical(ctx, parts, fbReq)
		}); err != nil {
			return nil, err
		}
	}
	if len(odd) > 0 {
		resp.Notes = append(resp.Notes, fmt.Sprintf("%s: searched by words only (no vectors, or none of a model the query was embedded by)", strings.Join(odd, ", ")))
	}
	snippets(parts, resp.Results, req)
	return resp, nil
}

func sameModel(p Part, m artifact.Embeddings) bool {
	e := p.Index.Manifest.Embeddings
	return e != nil && e.Same(m)
}

// snippets cuts each result's snippet for req's query, as a search of its
// own artifact does.
func snippets(parts []Part, results []Result, req Request) {
	type planned struct {
		plan *plan
		an   *artifact.Analyzer
	}
	plans := map[string]planned{}
	for i := range results {
		r := &results[i]
		p, ok := plans[r.Repo]
		if !ok {
			for _, part := range parts {
				if part.Name == r.Repo {
					p.an = artifact.NewAnalyzer(part.Index.Manifest.Analysis)
					p.plan = part.Index.plan(pathsFrom(syntax.Parse(req.Query), req.Dir), p.an)
				}
			}
			plans[r.Repo] = p
		}
		r.Snippet, r.Highlights = snippet(r.Content, p.plan, p.an)
	}
}

// each runs f on every part, as many at once as there are CPUs, and
// returns the first error, naming its part.
func each(parts []Part, f func(int, Part) error) error {
	errs := make([]error, len(parts))
	var wg sync.WaitGroup
	slots := make(chan struct{}, runtime.GOMAXPROCS(0))
	for i, p := range parts {
		wg.Add(1)
		slots <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			if _, err := guarded(p.Index, func() (struct{}, error) { return struct{}{}, f(i, p) }); err != nil {
				errs[i] = fmt.Errorf("%s: %w", p.Name, err)
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}
