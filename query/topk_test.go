package query_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/kbqdev/kbq/internal/testkb"
	"github.com/kbqdev/kbq/query"
)

// TestTopKMatchesExhaustive compares top-k evaluation with scoring every
// match: the same chunks in the same order with the same scores, over
// random queries on a corpus with long postings lists (many blocks a term),
// importance, scopes and shadowing, copies that tie within and across
// segments, before and after incremental builds that leave deleted chunks
// behind.
func TestTopKMatchesExhaustive(t *testing.T) {
	r := rand.New(rand.NewPCG(12, 34))
	files := corpus(r, 500)
	for path, text := range files {
		if strings.Contains(path, "topics/t") && r.IntN(4) == 0 {
			files[path] = strings.Replace(text, "---\ntitle:", fmt.Sprintf("---\nimportance: %.2f\ntitle:", r.Float64()), 1)
		}
	}
	// Rare words, so that some terms have short lists beside long ones.
	for i := range 40 {
		files[fmt.Sprintf(".kb/topics/rare%02d.md", i)] = fmt.Sprintf("# Rare %d\n\nzebra%d quokka %s\n", i, i%4, sentence(r, 8))
	}
	// Copies of a page in both scopes tie: deeper scope first, then path.
	for i := range 12 {
		text := files[fmt.Sprintf(".kb/topics/t%03d.md", 1+i*7)]
		for c := range 1 + i%4 {
			files[fmt.Sprintf(".kb/copies/%02d-%d.md", i, c)] = text
			files[fmt.Sprintf("services/api/.kb/copies/%02d-%d.md", i, c)] = text
		}
	}
	dir := t.TempDir()
	testkb.BuildInto(t, dir, files, nil)
	compare(t, dir, r, "full")

	// Incremental builds delete the chunks of changed documents.
	for round := range 2 {
		for path := range files {
			if strings.Contains(path, "topics/t") && r.IntN(6) == 0 {
				files[path] += "\n## Edited\n\n" + sentence(r, 30) + "\n"
			}
		}
		// New copies land in a new segment, tied with the old ones.
		for i := range 12 {
			if r.IntN(3) == 0 {
				files[fmt.Sprintf(".kb/copies/%02d-new%d.md", i, round)] = files[fmt.Sprintf(".kb/copies/%02d-0.md", i)]
			}
		}
		res := testkb.BuildInto(t, dir, files, nil)
		if !res.Incremental {
			t.Fatalf("round %d: build was not incremental", round)
		}
		compare(t, dir, r, fmt.Sprintf("incremental %d", round))
	}
}

// compare runs random queries with chunks skipped from the first (when
// the collector is full) and after the usual count of exact matches.
func compare(t *testing.T, dir string, r *rand.Rand, stage string) {
	t.Helper()
	restore := query.SetExactTotals(0)
	compareQueries(t, dir, r, stage+", skipping at once")
	restore()
	compareQueries(t, dir, r, stage)
}

func compareQueries(t *testing.T, dir string, r *rand.Rand, stage string) {
	t.Helper()
	ix, err := query.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	topk := 0
	for i := range 300 {
		req := randomRequest(r)
		if query.UsesTopK(ix, req.Query) {
			topk++
		}
		query.SetExhaustive(ix, false)
		got, err1 := ix.Search(context.Background(), req)
		query.SetExhaustive(ix, true)
		want, err2 := ix.Search(context.Background(), req)
		if (err1 == nil) != (err2 == nil) {
			t.Fatalf("%s %d %+v: errors %v and %v", stage, i, req, err1, err2)
		}
		if err1 != nil {
			continue
		}
		if len(got.Results) != len(want.Results) {
			t.Fatalf("%s %d %+v: %d results, exhaustive %d", stage, i, req, len(got.Results), len(want.Results))
		}
		for j := range got.Results {
			g, w := got.Results[j], want.Results[j]
			if g.Path != w.Path || g.Lines != w.Lines || g.Score != w.Score {
				t.Fatalf("%s %d %+v: result %d is %s:%v %v, exhaustive %s:%v %v", stage, i, req, j, g.Path, g.Lines, g.Score, w.Path, w.Lines, w.Score)
			}
		}
		if got.Total > want.Total || got.TotalExact && got.Total != want.Total {
			t.Fatalf("%s %d %+v: total %d (exact %v), exhaustive %d", stage, i, req, got.Total, got.TotalExact, want.Total)
		}
	}
	// Most random queries have the shape top-k evaluation handles.
	if topk < 200 {
		t.Fatalf("%s: only %d of 300 queries used top-k evaluation", stage, topk)
	}
}

func randomRequest(r *rand.Rand) query.Request {
	var words []string
	for range 1 + r.IntN(6) {
		w := vocabulary[r.IntN(len(vocabulary))]
		switch r.IntN(14) {
		case 0:
			w = "+" + w
		case 1:
			w = "-" + w
		case 2:
			w = w[:2] + "*"
		case 3:
			w = fmt.Sprintf("zebra%d", r.IntN(5))
		case 4:
			w = "quokka"
		case 5:
			w = "tag:" + vocabulary[r.IntN(len(vocabulary))]
		case 6:
			w = "title:" + w
		case 7:
			w = "-title:" + w
		}
		words = append(words, w)
	}
	req := query.Request{Query: strings.Join(words, " "), N: 1 + r.IntN(30), Chunks: r.IntN(2) == 0, MaxTokens: 1 << 20}
	switch r.IntN(4) {
	case 0:
		req.Dir = "services/api"
	case 1:
		req.AllScopes = true
	}
	if r.IntN(8) == 0 {
		req.Kinds = []string{"topic"}
	}
	return req
}
