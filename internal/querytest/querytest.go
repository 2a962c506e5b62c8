// Package querytest helps the tests of what reads artifacts: opening a
// compiled knowledge base, and comparing two rankings.
package querytest

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/kbqdev/kbq/internal/testkb"
	"github.com/kbqdev/kbq/query"
	"github.com/kbqdev/kbq/query/documents"
)

// Open compiles files and opens the artifact, closed when the test ends.
func Open(t testing.TB, files testkb.Files) *query.Index {
	t.Helper()
	return OpenDir(t, testkb.Build(t, files))
}

// OpenDir opens the artifact in dir, closed when the test ends.
func OpenDir(t testing.TB, dir string) *query.Index {
	t.Helper()
	ix, err := query.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return ix
}

// Diff says how got differs from want: its length, or the first result
// with another path, or a score off by more than tol. It is "" when they
// rank alike, and says so when both are empty, which proves nothing.
func Diff(got, want []query.Result, tol float64) string {
	switch {
	case len(want) == 0:
		return "no results to compare"
	case len(got) != len(want):
		return fmt.Sprintf("%d results, want %d", len(got), len(want))
	}
	for k := range want {
		g, w := got[k], want[k]
		if g.Path != w.Path || math.Abs(g.Score-w.Score) > tol {
			return fmt.Sprintf("result %d is %s (%.6f), want %s (%.6f)", k, g.Path, g.Score, w.Path, w.Score)
		}
	}
	return ""
}

// Answers opens the artifact in dir and returns everything it answers to
// reqs, and to a get of each of its documents, as JSON: two artifacts
// answer alike when their Answers are equal. A total past skipped chunks
// is a lower bound that depends on the segments, and is left out.
func Answers(t testing.TB, dir string, reqs []query.Request) string {
	t.Helper()
	ix := OpenDir(t, dir)
	var out strings.Builder
	for _, req := range reqs {
		resp, err := ix.Search(context.Background(), req)
		if err != nil {
			t.Fatalf("%+v: %v", req, err)
		}
		resp.Total, resp.TotalExact = 0, false
		data, _ := json.Marshal(resp)
		fmt.Fprintf(&out, "%+v\n%s\n", req, data)
	}
	docs, err := documents.List(ix, documents.ListRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		doc, err := documents.Get(context.Background(), ix, d.Path, "")
		if err != nil {
			t.Fatal(err)
		}
		data, _ := json.Marshal(doc)
		fmt.Fprintf(&out, "%s\n", data)
	}
	return out.String()
}
