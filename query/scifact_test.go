package query_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"unicode"

	"github.com/kbqdev/kbq/internal/testkb"
	"github.com/kbqdev/kbq/query"
)

// scifact reads SciFact from ../shared, or skips.
func scifact(t *testing.T) (files testkb.Files, queries map[string]string, relevant map[string][]string) {
	return testkb.SciFact(t, filepath.Join("..", "..", "shared", "datasets", "scifact"))
}

// Pasted prose is not syntax: no SciFact training query loses a relevant
// document to operator parsing. Every relevant document that the query's
// words alone find in their top 100 (all punctuation made space) must be
// in the top 100 of the query as typed.
func TestSciFactQueriesKeepTheirAnswers(t *testing.T) {
	files, queries, relevant := scifact(t)
	ix := open(t, files)
	matches := func(q string) map[string]bool {
		resp, err := ix.Search(context.Background(), query.Request{Query: q, N: 100, MaxTokens: 1 << 30, Mode: query.ModeLexical})
		if err != nil {
			t.Fatalf("search %q: %v", q, err)
		}
		got := map[string]bool{}
		for _, r := range resp.Results {
			got[r.Path] = true
		}
		return got
	}
	lost, checked := 0, 0
	for id, q := range queries {
		if !strings.ContainsAny(q, `+-"*?:`) && !strings.Contains(q, "AND") && !strings.Contains(q, "OR") && !strings.Contains(q, "NOT") {
			continue // nothing in it could be read as syntax
		}
		checked++
		words := strings.Map(func(r rune) rune {
			if unicode.IsLetter(r) || unicode.IsDigit(r) {
				return r
			}
			return ' '
		}, q)
		plain, typed := matches(words), matches(q)
		for _, p := range relevant[id] {
			if plain[p] && !typed[p] {
				lost++
				t.Errorf("query %s %q loses %s, which its words match", id, q, p)
			}
		}
	}
	if len(queries) < 500 {
		t.Fatalf("read %d training queries", len(queries))
	}
	t.Logf("%d training queries, %d with characters of the syntax, %d relevant documents lost from the top 100", len(queries), checked, lost)
}
