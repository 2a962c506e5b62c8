package evals

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kbqdev/kbq/query"
)

// Judgment is a query with graded relevance judgments: document id →
// grade, where 0 means judged not relevant.
type Judgment struct {
	ID       string         `json:"id"`
	Query    string         `json:"query"`
	Relevant map[string]int `json:"relevant"`
	// Dir is where the query is made from, as query.Request.Dir; AllScopes
	// searches everywhere instead.
	Dir       string `json:"dir,omitempty"`
	AllScopes bool   `json:"all_scopes,omitempty"`
	// Line is where an evals file gives the query.
	Line int `json:"line,omitempty"`
}

// Options configure an evaluation.
type Options struct {
	// DocID names a result for matching against judgments: "stem" (the file
	// name without .md, as BEIR corpus ids), "topic" or "path". Judgments of
	// an evals file match on topic or path.
	DocID string
	// Depth is how many results are retrieved per query (100 for recall@100).
	Depth int
	// Progress, when set, is called after each query.
	Progress func(done, total int)
	// Mode is the search mode; "" is the artifact's default.
	Mode string
	// Vectorize, when set, embeds a request's query for the semantic and
	// hybrid modes.
	Vectorize func(ctx context.Context, req *query.Request) error
	// Recency is the half-life of the recency prior; 0 for none.
	Recency time.Duration
	// Floor scales the relevance floors, as query.Request.Floor.
	Floor float64
}

// QueryScore is one query's metrics.
type QueryScore struct {
	ID        string  `json:"id"`
	Query     string  `json:"query"`
	NDCG10    float64 `json:"ndcg_at_10"`
	Recall10  float64 `json:"recall_at_10"`
	Recall100 float64 `json:"recall_at_100"`
	RR        float64 `json:"reciprocal_rank"`
	Relevant  int     `json:"relevant"`
}

// Result averages the metrics over the evaluated queries.
type Result struct {
	Queries   int          `json:"queries"`
	NDCG10    float64      `json:"ndcg_at_10"`
	Recall10  float64      `json:"recall_at_10"`
	Recall100 float64      `json:"recall_at_100"`
	MRR       float64      `json:"mrr"`
	PerQuery  []QueryScore `json:"per_query"`
}

// Run runs every judged query of ix and scores the rankings with the
// definitions of trec_eval: nDCG@10 with graded gains and a log2 discount,
// against the ideal ordering of all positive judgments; recall at 10 and
// 100; reciprocal rank of the first relevant result. Queries without a
// positive judgment are skipped, as trec_eval skips them.
func Run(ctx context.Context, ix *query.Index, judgments []Judgment, opts Options) (*Result, error) {
	if opts.Depth <= 0 {
		opts.Depth = 100
	}
	res := &Result{PerQuery: []QueryScore{}}
	for i, j := range judgments {
		if opts.Progress != nil {
			opts.Progress(i, len(judgments))
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		positives := 0
		for _, g := range j.Relevant {
			if g > 0 {
				positives++
			}
		}
		if positives == 0 {
			continue
		}
		req := query.Request{Query: j.Query, N: opts.Depth, MaxTokens: query.NoTokenLimit, Dir: j.Dir, AllScopes: j.AllScopes, Mode: opts.Mode, Recency: opts.Recency, Floor: opts.Floor}
		if opts.Vectorize != nil {
			if err := opts.Vectorize(ctx, &req); err != nil {
				return nil, err
			}
		}
		resp, err := ix.Search(ctx, req)
		if err != nil {
			return nil, fmt.Errorf("query %s: %w", j.ID, err)
		}
		ranked := make([]string, 0, len(resp.Results))
		for _, r := range resp.Results {
			ranked = append(ranked, docID(r, opts.DocID, j.Relevant))
		}
		s := Score(ranked, j.Relevant)
		s.ID, s.Query = j.ID, j.Query
		res.PerQuery = append(res.PerQuery, s)
		res.NDCG10 += s.NDCG10
		res.Recall10 += s.Recall10
		res.Recall100 += s.Recall100
		res.MRR += s.RR
	}
	if n := float64(len(res.PerQuery)); n > 0 {
		res.Queries = len(res.PerQuery)
		res.NDCG10 /= n
		res.Recall10 /= n
		res.Recall100 /= n
		res.MRR /= n
	}
	return res, nil
}

// docID names a result for judging it.
func docID(r query.Result, kind string, relevant map[string]int) string {
	switch kind {
	case "path":
		return r.Path
	case "topic":
		return r.Topic
	case "stem":
		return strings.TrimSuffix(path.Base(r.Path), path.Ext(r.Path))
	}
	// Evals files name documents by topic or path.
	if _, ok := relevant[r.Topic]; ok {
		return r.Topic
	}
	return r.Path
}

// Score computes the metrics of one ranking of document ids against graded
// judgments.
func Score(ranked []string, relevant map[string]int) QueryScore {
	var s QueryScore
	var ideal []int
	for _, g := range relevant {
		if g > 0 {
			ideal = append(ideal, g)
			s.Relevant++
		}
	}
	if s.Relevant == 0 {
		return s
	}
	slices.SortFunc(ideal, func(a, b int) int { return cmp.Compare(b, a) })
	var dcg, idcg float64
	found10, found100 := 0, 0
	for i, id := range dedup(ranked) {
		g := relevant[id]
		if g <= 0 {
			continue
		}
		if i < 10 {
			dcg += float64(g) / math.Log2(float64(i)+2)
			found10++
		}
		if i < 100 {
			found100++
		}
		if s.RR == 0 {
			s.RR = 1 / float64(i+1)
		}
	}
	for i, g := range ideal {
		if i >= 10 {
			break
		}
		idcg += float64(g) / math.Log2(float64(i)+2)
	}
	s.NDCG10 = dcg / idcg
	s.Recall10 = float64(found10) / float64(s.Relevant)
	s.Recall100 = float64(found100) / float64(s.Relevant)
	return s
}

// dedup keeps the first occurrence of each id: a document found twice (two
// of its chunks, say) counts once and takes one rank.
func dedup(ids []string) []string {
	seen := make(map[string]bool, len(ids))
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

// ReadBEIR reads judgments in BEIR's layout: queries as JSON lines with
// "_id" and "text", and relevance as TSV lines "query-id corpus-id score"
// (a header line is skipped).
func ReadBEIR(queries, qrels io.Reader) ([]Judgment, error) {
	rel := make(map[string]map[string]int)
	sc := bufio.NewScanner(qrels)
	for n := 1; sc.Scan(); n++ {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		if len(fields) != 3 {
			return nil, fmt.Errorf("qrels line %d: want query-id corpus-id score, got %q", n, sc.Text())
		}
		grade, err := strconv.Atoi(fields[2])
		if err != nil {
			if n == 1 {
				continue // header
			}
			return nil, fmt.Errorf("qrels line %d: score %q is not an integer", n, fields[2])
		}
		if rel[fields[0]] == nil {
			rel[fields[0]] = make(map[string]int)
		}
		rel[fields[0]][fields[1]] = grade
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read qrels: %w", err)
	}
	var out []Judgment
	qs := bufio.NewScanner(queries)
	qs.Buffer(nil, 1<<20)
	for n := 1; qs.Scan(); n++ {
		line := strings.TrimSpace(qs.Text())
		if line == "" {
			continue
		}
		var q struct {
			ID   string `json:"_id"`
			Text string `json:"text"`
		}
		if err := json.Unmarshal([]byte(line), &q); err != nil {
			return nil, fmt.Errorf("queries line %d: %w", n, err)
		}
		if r := rel[q.ID]; r != nil {
			out = append(out, Judgment{ID: q.ID, Query: q.Text, Relevant: r, AllScopes: true})
		}
	}
	if err := qs.Err(); err != nil {
		return nil, fmt.Errorf("read queries: %w", err)
	}
	return out, nil
}

// CheckNames reports the first judged document of ix that is neither a topic nor
// a path of the artifact: in a team's evals file, a typo or a document
// since removed, which would otherwise only lower the scores.
func CheckNames(ix *query.Index, judgments []Judgment) error {
	docs, err := ix.Documents()
	if err != nil {
		return err
	}
	known := make(map[string]bool, 2*len(docs))
	for _, d := range docs {
		known[d.Topic] = true
		known[d.Path] = true
	}
	for _, j := range judgments {
		names := slices.Sorted(maps.Keys(j.Relevant))
		for _, name := range names {
			if !known[name] {
				return fmt.Errorf("line %d: expect names %q, which is neither a topic nor a path of the artifact (kbq list shows them)", j.Line, name)
			}
		}
	}
	return nil
}
