package query

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"math"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kbqdev/kbq/artifact"
	"github.com/kbqdev/kbq/knowledge"
	"github.com/kbqdev/kbq/query/syntax"
)

// Request is a search.
type Request struct {
	Query string
	// N is the number of results; 0 means 5.
	N int
	// MaxTokens bounds the content of all results together, at about four
	// bytes a token; 0 means 8000. Results are trimmed to fit.
	MaxTokens int
	// Kinds, Tags and Scopes filter results; each list matches any of its
	// values. A scope also matches the scopes below it.
	Kinds, Tags, Scopes []string
	// Dir is where the query is made from, relative to the repository root
	// ("" for the root): scopes that contain it are in force, the deeper
	// shadowing the shallower for the same topic, and scopes that do not
	// contain it are left out.
	Dir string
	// AllScopes searches every scope, without shadowing.
	AllScopes bool
	// Chunks returns every matching chunk instead of each document's best.
	Chunks bool
	// Mode is ModeHybrid, ModeLexical or ModeSemantic; "" is hybrid when
	// the artifact has vectors, else lexical.
	Mode string
	// Vector is the query embedded by the artifact's model (see
	// Manifest.Embeddings), for the semantic and hybrid modes.
	Vector []float32
	// Embed, when Vector is nil, embeds the query: the search calls it
	// while it does what needs no vector (ranks by words, reads the
	// stored vectors' pages).
	Embed func(context.Context) ([]float32, error)
	// Vectors, for a Union whose artifacts were built with several
	// models, is the query embedded by each model but the first
	// (Union.Models), which Vector and Embed are for.
	Vectors []ModelVector
	// Notes go first among the response's: why a channel was skipped
	// (the query could not be embedded), said in every door.
	Notes []string
	// IncludeSuperseded keeps the documents another supersedes, or that
	// are deprecated, which searches leave out by default.
	IncludeSuperseded bool
	// Recency, when positive, is the half-life of a prior for recently
	// changed documents (recency.go); off by default.
	Recency time.Duration
	// Floor scales the relevance floors (floor.go): 0 is the default,
	// FloorOff keeps every result.
	Floor float64
	// HideTopics leaves out the documents of these topics, unless
	// AllScopes or Scopes: a scope in force above this artifact's holds
	// them (a repository's own, over an org scope's; Union sets it).
	HideTopics []string

	noSnippets bool // results without snippets, for a search that fuses them
	// undiversified: a channel's ranking as it is, for a search that
	// fuses or merges it and diversifies the whole (diversify.go).
	undiversified bool
	coll          *collection // the statistics of several artifacts searched as one
	// scoped, in a Union with org scopes, is how each artifact's search
	// differs: where an org scope is read from, and what it hides.
	scoped map[*Index]scopedRequest
}

// scopedRequest is what an org scope's search in a Union reads: its
// root's scopes, without the topics of the scopes in force above it.
type scopedRequest struct {
	dir  string
	hide []string
}

// scopedFor is req as ix's search in a Union reads it.
func (ix *Index) scopedFor(req Request) Request {
	if s, ok := req.scoped[ix]; ok {
		req.Dir, req.HideTopics = s.dir, s.hide
	}
	return req
}

// Result is one search hit: a chunk of a document.
type Result struct {
	Path    string   `json:"path"`
	Topic   string   `json:"topic"`
	Kind    string   `json:"kind"`
	Scope   string   `json:"scope"`
	Heading string   `json:"heading"`
	Lines   [2]int   `json:"lines"`
	Score   float64  `json:"score"`
	Snippet string   `json:"snippet"`
	Content string   `json:"content"`
	Tags    []string `json:"tags"`
	// Meta holds the document's Meta keys (owner), when it sets any.
	Meta map[string]string `json:"meta,omitempty"`
	// Repo names the artifact the result came from when several are
	// searched as one (Union).
	Repo string `json:"repo,omitempty"`
	// Channels says which rankings found the result: lexical, semantic
	// or both.
	Channels []string `json:"channels"`
	// Disputed names the documents in an unresolved dispute with this
	// one (contradicts:): both are shown, the newer first.
	Disputed []string `json:"disputed,omitempty"`
	// Age is the document's last change, when the build recorded it.
	Age

	// Title is the document's title.
	Title string `json:"-"`
	// Highlights are byte ranges of Snippet that match the query.
	Highlights [][2]int `json:"-"`
	// Trimmed is set when Content was cut to fit the token budget.
	Trimmed bool `json:"-"`
	// Lexical is the chunk's score by words as a share of the most the
	// query's words can score (the sum of their idf: every word matched,
	// saturated); Similarity the cosine of its vector and the query's.
	// Each is 0 when its channel did not find the chunk. The relevance
	// floors are on them (floor.go).
	Lexical    float64 `json:"-"`
	Similarity float64 `json:"-"`

	chunk int
	depth int
	doc   uint64 // the chunk's number in the index
	ix    *Index // the index that holds it
	// feedback is the chunk's lexical share of the words of a hybrid
	// search's first result (fuse): how much it shares with the answer.
	feedback float64
}

// Response answers a Request.
type Response struct {
	Query string `json:"query"`
	// Total counts the matching chunks; when TotalExact is false, top-k
	// evaluation skipped chunks that could not rank, and Total is a lower
	// bound.
	Total      int  `json:"total"`
	TotalExact bool `json:"total_exact"`
	// Notes say how the query was narrowed to bound its cost.
	Notes   []string `json:"notes,omitempty"`
	Results []Result `json:"results"`
	// Trimmed is set when results were dropped or cut to fit MaxTokens.
	Trimmed bool `json:"-"`
	// Elsewhere, when nothing matched in the scopes in force, counts the
	// chunks that match in other scopes.
	Elsewhere int `json:"-"`
}

// Defaults of a Request.
const (
	DefaultN         = 5
	DefaultMaxTokens = 8000
	bytesPerToken    = 4
	// NoTokenLimit, as MaxTokens, returns every result whole.
	NoTokenLimit = math.MaxInt32 / bytesPerToken
)

// Search runs req against the index. Documents another supersedes, or
// that are deprecated, are left out unless req.IncludeSuperseded; the
// response's notes name those that would have ranked, and what replaced
// them. Each result carries its document's age, and req.Recency ranks
// the recently changed higher.
func (ix *Index) Search(ctx context.Context, req Request) (*Response, error) {
	req = ix.scopedFor(req)
	notes := req.Notes
	req.Notes = nil
	resp, err := guarded(ix, func() (*Response, error) { return ix.searchDated(ctx, req) })
	if err == nil {
		applyFloor(resp, ix.floorOf(req), ix.similarityFloor(), ix.Mode(req) == ModeHybrid)
		ix.markDisputes(resp)
	}
	if err == nil && len(notes) > 0 {
		resp.Notes = append(slices.Clone(notes), resp.Notes...)
	}
	return resp, err
}

func (ix *Index) searchDated(ctx context.Context, req Request) (*Response, error) {
	req.N = capN(req.N, ix.Manifest.Counts.Chunks)
	retired := ix.Manifest.Retired
	dropRetired := len(retired) > 0 && !req.IncludeSuperseded && !namesStatus(syntax.Parse(req.Query))
	if !dropRetired && req.Recency <= 0 {
		resp, err := ix.search(ctx, req)
		if err == nil {
			ix.dateResults(resp.Results)
		}
		return resp, err
	}
	n, maxTokens := cmp.Or(req.N, DefaultN), cmp.Or(req.MaxTokens, DefaultMaxTokens)
	inner := req
	inner.N, inner.MaxTokens = n, 1<<30
	if dropRetired {
		inner.N += min(len(retired), 50)
	}
	if req.Recency > 0 {
		inner.N = max(inner.N, recencyPool(n))
	}
	resp, err := ix.search(ctx, inner)
	if err != nil {
		return nil, err
	}
	ix.dateResults(resp.Results)
	if req.Recency > 0 {
		preferRecent(resp.Results, req.Recency, cmp.Or(ix.ranking.RecencyWeight, DefaultRecencyWeight), now())
	}
	kept := resp.Results[:0]
	for i, r := range resp.Results {
		by, gone := retired[r.Path]
		switch {
		case !gone || !dropRetired:
			if len(kept) < n {
				kept = append(kept, r)
			}
		case i < n:
			what := r.Path + " is deprecated"
			if by != "" {
				what = r.Path + " is superseded by " + by
			}
			resp.Notes = append(resp.Notes, what+": left out (--include-superseded shows it)")
		}
	}
	resp.Results = kept
	resp.Trimmed = trimToBudget(resp, maxTokens*bytesPerToken)
	return resp, nil
}

// capN is n results (DefaultN for none) bounded by the chunks there are:
// what a search allocates follows its n, which may be any number a caller
// typed.
func capN(n, chunks int) int {
	if n <= 0 {
		n = DefaultN
	}
	return min(n, max(chunks, 1))
}

// dateResults gives each result its document's age.
func (ix *Index) dateResults(results []Result) {
	for i := range results {
		results[i].Age, _ = ix.ageAt(results[i].Path)
	}
}

// namesStatus reports whether a query filters by status: it says then
// which documents it wants.
func namesStatus(p syntax.Parsed) bool {
	for _, c := range p.Clauses {
		if c.Field == "status" || namesStatus(syntax.Parsed{Clauses: c.Sub}) {
			return true
		}
	}
	return false
}

// search runs req, the documents of every status included.
func (ix *Index) search(ctx context.Context, req Request) (*Response, error) {
	req = ix.scopedFor(req)
	if req.N <= 0 {
		req.N = DefaultN
	}
	if req.MaxTokens <= 0 {
		req.MaxTokens = DefaultMaxTokens
	}
	for _, k := range req.Kinds {
		if !slices.Contains(knowledge.IndexedKinds(), k) {
			return nil, fmt.Errorf("unknown kind %q (want one of %s)", k, strings.Join(knowledge.IndexedKinds(), ", "))
		}
	}
	parsed := pathsFrom(syntax.Parse(req.Query), req.Dir)
	if err := checkFilters(parsed.Clauses); err != nil {
		return nil, err
	}
	if onlyExcludes(parsed) {
		return nil, fmt.Errorf("%w (%s): add a word, a filter such as kind:topic, or * to search for", ErrNothingToFind, shortQuery(req.Query))
	}
	selected, err := ix.selectedScopes(req.Scopes, parsed)
	if err != nil {
		return nil, err
	}
	switch mode := ix.Mode(req); mode {
	case ModeLexical:
	case ModeSemantic, ModeHybrid:
		if ix.Manifest.Embeddings == nil {
			return nil, fmt.Errorf("--mode %s: %w (build it with kbc build --embed MODEL)", mode, ErrNoVectors)
		}
		if req.Vector == nil && req.Embed == nil {
			return nil, fmt.Errorf("--mode %s: the query has no vector", mode)
		}
		var resp *Response
		cons := ix.constraints(parsed, artifact.NewAnalyzer(ix.Manifest.Analysis))
		if mode == ModeSemantic {
			if req.Vector == nil {
				warmed := make(chan struct{})
				go func() {
					defer close(warmed)
					var err error // the search meets the damage again, and says so
					defer ix.guard(&err)
					ix.warmSemantic()
				}()
				req.Vector, err = req.Embed(ctx)
				<-warmed
				if err != nil {
					return nil, err
				}
			}
			k := req.N
			if !req.undiversified {
				k = max(k, diversifyDepth*k, minDiversify)
			}
			if resp, err = ix.searchSemantic(req, selected, cons, k); err == nil && !req.undiversified {
				resp.Results = diversify(resp.Results, req.N, ix.ranking.Diversity)
			}
		} else {
			resp, err = ix.searchHybrid(ctx, req, selected, cons)
		}
		if err != nil {
			return nil, err
		}
		an := artifact.NewAnalyzer(ix.Manifest.Analysis)
		plan := ix.plan(parsed, an)
		if mode == ModeSemantic { // hybrid has the lexical channel's notes
			resp.Notes = append(plan.notes, resp.Notes...)
		}
		for i := range resp.Results {
			r := &resp.Results[i]
			r.Snippet, r.Highlights = snippet(r.Content, plan, an)
		}
		resp.Trimmed = trimToBudget(resp, req.MaxTokens*bytesPerToken)
		return resp, nil
	default:
		return nil, fmt.Errorf("unknown mode %q (want %s)", mode, strings.Join(Modes, ", "))
	}
	an := artifact.NewAnalyzer(ix.Manifest.Analysis)
	plan := ix.plan(parsed, an)
	if plan.root == nil {
		return &Response{Query: req.Query, Results: []Result{}}, nil
	}
	root := plan.root
	if must, mustNot := ix.filters(req, selected); len(must)+len(mustNot) > 0 {
		root = boolNode{must: append([]node{root}, must...), mustNot: mustNot}
	}
	top, perDocument, ev, err := ix.topK(ctx, root, !req.Chunks, req.coll)
	if err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	if req.coll != nil && req.coll.record != nil {
		// A Union's first pass wants the document frequencies, which
		// preparing the evaluation has recorded.
		return &Response{Query: req.Query, Results: []Result{}}, nil
	}
	resp := &Response{Query: req.Query}
	// Enough chunks for req.N documents once phrases are checked and each
	// document is collapsed to its best chunk, or more next time round.
	k := req.N*8 + 24
	// Without phrases, a hit's place follows from its score and its
	// document alone: no stored text is needed to rank.
	byScore := len(plan.phrases)+len(plan.notPhrases)+len(plan.preferred) == 0
	if perDocument && byScore {
		k = req.N
	}
	if bar := req.coll.barOf(); bar != nil && perDocument && byScore {
		// Another artifact of a Union has found better: a chunk
		// scoring below its N-th best result cannot be among the
		// union's.
		ev.bar, ev.counted, ev.hasBar = bar.get()
	}
	a := newArena()
	defer a.release() // the results hold copies
	for ; ; k *= 4 {
		found, err := top(k)
		if err != nil {
			return nil, fmt.Errorf("search: %w", err)
		}
		docs := found.hits
		if byScore && !ix.exhaustive {
			if docs, err = ix.engine.firstRanked(docs, req.N, !req.Chunks); err != nil {
				return nil, fmt.Errorf("search: %w", err)
			}
		}
		hits, err := ix.hits(docs, a)
		if err != nil {
			return nil, err
		}
		results := ix.rank(hits, plan, an, req)
		resp.Total = found.matched - (len(hits) - len(results.verified))
		resp.TotalExact = found.exact
		resp.Results = results.top
		if len(resp.Results) >= req.N || len(found.hits) < k {
			break
		}
	}
	total := resp.Total
	ideal := ev.ideal(plan.alternatives)
	for i := range resp.Results {
		if ideal > 0 {
			resp.Results[i].Lexical = max(resp.Results[i].Lexical, resp.Results[i].Score/ideal)
		} else {
			resp.Results[i].Lexical = 1 // filters alone: every match answers
		}
	}
	resp.Notes = append(plan.notes, ev.notes...)
	if len(resp.Results) > req.N {
		resp.Results = resp.Results[:req.N]
	}
	for i := range resp.Results {
		if req.noSnippets {
			break
		}
		r := &resp.Results[i]
		r.Snippet, r.Highlights = snippet(r.Content, plan, an)
	}
	resp.Trimmed = trimToBudget(resp, req.MaxTokens*bytesPerToken)
	if resp.Results == nil {
		resp.Results = []Result{}
	}
	if total == 0 && !req.AllScopes && !selected && ix.scopesLimit(req.Dir) {
		// Say when other scopes would have answered.
		all := plan.root
		if must, mustNot := ix.filters(Request{Kinds: req.Kinds, Tags: req.Tags, AllScopes: true}, false); len(must)+len(mustNot) > 0 {
			all = boolNode{must: append([]node{plan.root}, must...), mustNot: mustNot}
		}
		ev := ix.engine.newEval(ix.ranking, ix.Manifest.Fields, ix.Manifest.Counts.Chunks)
		if m, err := all.match(ev, false); err == nil {
			resp.Elsewhere = int(m.Count())
		}
	}
	return resp, nil
}

// pathsFrom lets each path: filter name, besides a path from the
// repository root, a path relative to dir (where the query is made from,
// as the user's other paths are) and a topic key: path:notes/x.md from
// services/api matches services/api/notes/x.md, and path:deploy the topic
// deploy and those below it.
func pathsFrom(p syntax.Parsed, dir string) syntax.Parsed {
	for i, c := range p.Clauses {
		if c.Kind != syntax.Filter || c.Field != "path" {
			continue
		}
		alts := []syntax.Clause{c}
		add := func(field, text string) {
			for _, a := range alts {
				if a.Field == field && a.Text == text {
					return
				}
			}
			alts = append(alts, syntax.Clause{Occur: c.Occur, Kind: syntax.Filter, Field: field, Text: text})
		}
		v := strings.TrimPrefix(c.Text, "./")
		if dir != "" && !strings.HasPrefix(v, "/") {
			joined := path.Join(dir, v)
			if strings.HasSuffix(v, "/") {
				joined += "/"
			}
			if !strings.HasPrefix(joined, "../") && joined != ".." {
				add("path", joined)
			}
		}
		if topic := strings.TrimSuffix(strings.Trim(v, "/"), ".md"); topic != "" && !strings.Contains(topic, "/.kb/") && !strings.HasPrefix(topic, ".kb/") {
			add("topic", topic)
		}
		alts[0].Text = strings.TrimPrefix(v, "/")
		if len(alts) > 1 {
			for j := range alts {
				alts[j].Occur = syntax.Should
			}
			occur := c.Occur
			if occur == syntax.Should {
				occur = syntax.Must
			}
			p.Clauses[i] = syntax.Clause{Occur: occur, Kind: syntax.Any, Sub: alts}
		} else {
			p.Clauses[i] = alts[0]
		}
	}
	return p
}

// shortQuery is q for a message: its first 60 characters.
func shortQuery(q string) string {
	q = strings.TrimSpace(q)
	if r := []rune(q); len(r) > 60 {
		return string(r[:60]) + "…"
	}
	return q
}

// onlyExcludes reports whether every clause of p excludes: such a query
// would match everything, all with a score of 0.
func onlyExcludes(p syntax.Parsed) bool {
	for _, c := range p.Clauses {
		if c.Occur != syntax.MustNot {
			return false
		}
	}
	return len(p.Clauses) > 0
}

// topK prepares the evaluation of root and returns a function that finds
// its k best chunks: top-k evaluation when the query has its shape, else
// every match scored term at a time. With perDocument, top-k evaluation
// keeps each document's best chunk only, and says so.
func (ix *Index) topK(ctx context.Context, root node, perDocument bool, coll *collection) (func(k int) (topResult, error), bool, *eval, error) {
	ev := ix.scoringEval(coll)
	ev.ctx = ctx
	if !ix.exhaustive {
		q, ok, err := ev.compileTop(root)
		if err != nil {
			return nil, false, nil, err
		}
		if ok {
			return func(k int) (topResult, error) { return q.run(ev, k, perDocument) }, perDocument, ev, nil
		}
	}
	if scored(root) {
		// By chunk number: what grows with the index is left to the
		// queries that score.
		ev.scores = make([]float64, ix.engine.maxDoc)
	}
	matched, err := root.match(ev, true)
	if err != nil {
		return nil, false, nil, err
	}
	total := int(matched.Count())
	return func(k int) (topResult, error) {
		return topResult{hits: topScored(matched, ev.scores, k, ix.engine.factor), matched: total, exact: true}, nil
	}, false, ev, nil
}

// selectedScopes checks the scopes a request names, by --scope or scope:
// in the query, against the artifact's, and reports whether it names any:
// a query that selects scopes searches them from anywhere.
func (ix *Index) selectedScopes(scopes []string, p syntax.Parsed) (bool, error) {
	for _, c := range p.Clauses {
		if c.Kind == syntax.Filter && c.Field == "scope" && c.Occur == syntax.Must {
			scopes = append(scopes, c.Text)
		}
	}
	for _, s := range scopes {
		if !ix.knownScope(s) {
			known := slices.Sorted(maps.Keys(ix.Manifest.Counts.ByScope))
			return false, fmt.Errorf("%w: %q is not a scope of this artifact; its scopes are %s", ErrUnknownScope, s, strings.Join(known, ", "))
		}
	}
	return len(scopes) > 0, nil
}

// knownScope reports whether scope, or a scope below it, holds documents.
func (ix *Index) knownScope(scope string) bool {
	scope = normalizeScope(scope)
	for s := range ix.Manifest.Counts.ByScope {
		if s == scope {
			return true
		}
		if dir, ok := knowledge.ScopeDir(scope); ok && dir != "" && strings.HasPrefix(s, scope+"/") {
			return true
		}
	}
	return false
}

// normalizeScope accepts "." and "" for the project scope, and a trailing
// slash.
func normalizeScope(scope string) string {
	scope = strings.TrimSuffix(strings.TrimPrefix(scope, "./"), "/")
	if scope == "." || scope == "" {
		return knowledge.ScopeProject
	}
	return scope
}

// filters returns the constraints of the request's flags and of scope
// precedence: nodes every result must match, and nodes none may match.
// When the request selects scopes, they are searched wherever it is made
// from, without the precedence of the scopes in force there.
func (ix *Index) filters(req Request, selected bool) (must, mustNot []node) {
	add := func(values []string, term func(string) node) {
		if len(values) == 0 {
			return
		}
		ns := make(anyNode, len(values))
		for i, v := range values {
			ns[i] = term(v)
		}
		must = append(must, ns)
	}
	add(req.Kinds, func(v string) node { return facetNode(artifact.FacetKind(v)) })
	add(req.Tags, func(v string) node { return facetNode(artifact.FacetTag(v)) })
	add(req.Scopes, scopeNode)
	if req.AllScopes || selected {
		return must, nil
	}
	// Filters that cannot exclude anything are left out.
	inForce := ix.scopesInForce(req.Dir)
	if len(inForce) < len(ix.Manifest.Counts.ByScope) {
		in := anyNode{noneNode{}}
		for _, s := range inForce {
			in = append(in, facetNode(artifact.FacetScope(s)))
		}
		must = append(must, in)
	}
	var shadow anyNode
	for _, s := range inForce {
		if slices.Contains(ix.Manifest.Counts.Shadowing, s) {
			shadow = append(shadow, facetNode(artifact.FacetShadowedBy(s)))
		}
	}
	for _, t := range req.HideTopics {
		shadow = append(shadow, facetNode(artifact.FacetTopic(t)))
	}
	if len(shadow) > 0 {
		mustNot = append(mustNot, shadow)
	}
	return must, mustNot
}

// scopesLimit reports whether searches from dir leave anything out: a
// scope not in force there, or a document shadowed there.
func (ix *Index) scopesLimit(dir string) bool {
	inForce := ix.scopesInForce(dir)
	if len(inForce) < len(ix.Manifest.Counts.ByScope) {
		return true
	}
	for _, s := range inForce {
		if slices.Contains(ix.Manifest.Counts.Shadowing, s) {
			return true
		}
	}
	return false
}

// scopesInForce lists the artifact's scopes that contain dir.
func (ix *Index) scopesInForce(dir string) []string {
	var out []string
	for s := range ix.Manifest.Counts.ByScope {
		if knowledge.ScopeContains(s, dir) {
			out = append(out, s)
		}
	}
	slices.Sort(out)
	return out
}

// phraseBonus raises the score of a chunk holding a quoted phrase by half
// for each: it holds the words in order, as the person typed them.
const phraseBonus = 0.5

// Blobs returns the git blob hash of each result's document, read from the
// document's first chunk ("" where the artifact does not have it). Search
// leaves it out: only recording use needs it, and at 30x reading it for
// every result added a millisecond to p99.
func (ix *Index) Blobs(results []Result) []string {
	out := make([]string, len(results))
	for i, r := range results {
		if uint64(r.chunk) > r.doc {
			continue
		}
		ix.engine.visitStored(r.doc-uint64(r.chunk), nil, func(field string, value []byte) bool {
			if field == artifact.FieldBlob {
				out[i] = string(value)
				return false
			}
			return true
		})
	}
	return out
}

// hit is a match with its stored fields.
type hit struct {
	Result
	body  []byte
	err   error // a stored field that did not parse
	found bool  // a copy of another channel's result for the document, not read
}

// hits reads the stored fields of scored chunks, their values into a.
func (ix *Index) hits(docs []scoredDoc, a *arena) ([]hit, error) {
	return ix.hitsBut(docs, nil, a)
}

// hitsBut is hits, but a chunk of a document in found is a copy of the
// result found has for it, scored as the chunk is, and not read.
func (ix *Index) hitsBut(docs []scoredDoc, found map[uint32]*Result, a *arena) ([]hit, error) {
	hits := make([]hit, len(docs))
	for i, d := range docs {
		h := &hits[i]
		if found != nil {
			if r, ok := found[ix.rows.docOf(d.doc)]; ok {
				h.Result, h.found = *r, true
				h.Score = d.score
				continue
			}
		}
		h.Score = d.score
		if err := ix.engine.visitStored(d.doc, a, h.visit); err != nil {
			return nil, fmt.Errorf("read stored fields: %w", err)
		}
		if h.err != nil {
			return nil, fmt.Errorf("read stored fields of %s: %w", h.Path, h.err)
		}
		h.doc, h.ix = d.doc, ix
	}
	return hits, nil
}

// visit fills a hit from one stored field.
func (h *hit) visit(field string, value []byte) bool {
	switch field {
	case artifact.FieldPath:
		h.Path = string(value)
	case artifact.FieldTopic:
		h.Topic = string(value)
	case artifact.FieldKind:
		h.Kind = string(value)
	case artifact.FieldScope:
		h.Scope = string(value)
		h.depth = knowledge.ScopeDepth(h.Scope)
	case artifact.FieldHeading:
		h.Heading = string(value)
	case artifact.FieldTags:
		if len(value) > 0 {
			h.Tags = strings.Split(string(value), artifact.TagSeparator)
		}
	case artifact.FieldBody:
		h.body = value // the chunk's own memory (visitStored)
	case artifact.FieldDisplayTitle:
		h.Title = string(value)
	case artifact.FieldLines:
		h.Lines[0], h.Lines[1], h.err = parseRange(field, value)
	case artifact.FieldChunk:
		h.chunk, h.err = parseStored(field, value, strconv.Atoi)
	case artifact.FieldMeta:
		h.Meta = artifact.DecodeMeta(value)
	}
	return h.err == nil
}

// parseStored parses a stored field's value; a value that does not parse
// is a corrupt artifact, never a zero.
func parseStored[T any](field string, value []byte, parse func(string) (T, error)) (T, error) {
	v, err := parse(string(value))
	if err != nil {
		return v, fmt.Errorf("%w: stored field %s holds %q", artifact.ErrCorrupt, field, value)
	}
	return v, nil
}

// parseRange parses a stored "start-end" range.
func parseRange(field string, value []byte) (int, int, error) {
	a, b, ok := strings.Cut(string(value), "-")
	start, err1 := strconv.Atoi(a)
	end, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || end < start {
		return 0, 0, fmt.Errorf("%w: stored field %s holds %q, not start-end", artifact.ErrCorrupt, field, value)
	}
	return start, end, nil
}

type ranked struct {
	verified []hit
	top      []Result
}

// rank verifies phrases, orders hits and collapses each
// document to its best chunk, keeping the req.N best.
func (ix *Index) rank(hits []hit, plan *plan, an *artifact.Analyzer, req Request) ranked {
	out := ranked{verified: make([]hit, 0, len(hits)), top: make([]Result, 0, min(req.N, len(hits)))}
	for _, h := range hits {
		if !plan.phrasesMatch(h.body, h.Title, h.Heading, an) {
			continue
		}
		if n := plan.preferredHeld(h.body, h.Title, h.Heading, an); n > 0 {
			h.Score *= 1 + phraseBonus*float64(n)
			h.Lexical = 1 // it holds words the query quotes: it answers
		}
		if len(plan.phrases) > 0 {
			h.Lexical = 1 // it holds the phrases the query requires
		}
		out.verified = append(out.verified, h)
	}
	slices.SortFunc(out.verified, func(a, b hit) int {
		return cmp.Or(cmp.Compare(b.Score, a.Score), cmp.Compare(b.depth, a.depth),
			cmp.Compare(a.Path, b.Path), cmp.Compare(a.chunk, b.chunk))
	})
	seen := make(map[string]bool)
	for _, h := range out.verified {
		if len(out.top) == req.N {
			break // Search keeps no more
		}
		if !req.Chunks {
			if seen[h.Path] {
				continue
			}
			seen[h.Path] = true
		}
		if h.Tags == nil {
			h.Tags = []string{}
		}
		h.Channels = []string{ModeLexical}
		h.Content = string(h.body)
		out.top = append(out.top, h.Result)
	}
	return out
}

// trimToBudget cuts results so that their content fits in budget bytes:
// the result that crosses the budget keeps its first lines, the rest are
// dropped. It reports whether anything was cut.
func trimToBudget(resp *Response, budget int) bool {
	used := 0
	for i := range resp.Results {
		r := &resp.Results[i]
		left := budget - used
		if len(r.Content) <= left {
			used += len(r.Content)
			continue
		}
		if left < 200 && i > 0 {
			resp.Results = resp.Results[:i]
			return true
		}
		cut := max(left, 0)
		if nl := strings.LastIndexByte(r.Content[:cut], '\n'); nl > 0 {
			cut = nl + 1
		}
		for cut > 0 && cut < len(r.Content) && !isRuneStart(r.Content[cut]) {
			cut--
		}
		r.Content = r.Content[:cut]
		r.Trimmed = true
		resp.Results = resp.Results[:i+1]
		return true
	}
	return false
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }
