package query_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/kbqdev/kbq/internal/testkb"
	"github.com/kbqdev/kbq/query"
)

// wordy is a corpus with a large dictionary: random words of 3 to 8
// letters, so that prefixes and wildcards expand to many terms.
func wordy(docs int) testkb.Files {
	r := rand.New(rand.NewPCG(11, 12))
	files := testkb.Files{}
	for i := range docs {
		var b strings.Builder
		fmt.Fprintf(&b, "---\ntags: [t%d]\n---\n# Doc %d\n\n", i%50, i)
		for j := range 150 {
			if j > 0 {
				b.WriteByte(' ')
			}
			for range 3 + r.IntN(6) {
				b.WriteByte(byte('a' + r.IntN(26)))
			}
		}
		files[fmt.Sprintf(".kb/d%d/doc%04d.md", i%20, i)] = b.String() + "\n"
	}
	return files
}

// fill repeats parts up to about n bytes.
func fill(n int, part func(i int) string) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		b.WriteString(part(i))
		b.WriteByte(' ')
	}
	return b.String()
}

var (
	costIndexOnce sync.Once
	costIndexDir  string
)

// costIndex opens the wordy corpus's artifact, built once for the
// package's tests and removed by TestMain.
func costIndex(t testing.TB) *query.Index {
	costIndexOnce.Do(func() {
		dir, err := os.MkdirTemp("", "kbq-cost-")
		if err != nil {
			t.Fatal(err)
		}
		costIndexDir = dir
		testkb.BuildInto(t, dir, wordy(400), nil)
	})
	ix, err := query.Open(costIndexDir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return ix
}

// withinLimits fails the test when a search's cost passed a limit.
func withinLimits(t testing.TB, ix *query.Index, q string) query.Cost {
	t.Helper()
	c, err := query.SearchCost(ix, q)
	if err != nil {
		t.Fatalf("%.60q: %v", q, err)
	}
	if c.Clauses > c.MaxClauses || c.Terms > c.MaxTerms || c.Expanded > c.MaxExpanded || c.ExpandedDF > c.MaxDF || c.Scanned > c.MaxScanned+1 {
		t.Fatalf("%.60q: cost %+v over its limits", q, c)
	}
	return c
}

func TestQueryCostIsBounded(t *testing.T) {
	ix := costIndex(t)
	two := func(i int) string { return string([]byte{byte('a' + i/26%26), byte('a' + i%26)}) }
	for _, tc := range []struct {
		name, q string
		note    string // a note the search must give, "" for none
	}{
		{"the same prefix 2,000 times", fill(8000, func(int) string { return "a*" }), ""},
		{"distinct prefixes", fill(8000, func(i int) string { return two(i) + "*" }), "reached their limit"},
		{"leading wildcards", fill(8000, func(i int) string { return "*" + two(i) + "*" }), "reached their limit"},
		{"distinct filters", fill(16000, func(i int) string { return fmt.Sprintf("tag:x%d", i) }), "more than 256 clauses"},
		{"distinct words", fill(40000, func(i int) string { return fmt.Sprintf("w%dz", i) }), "more than 1024 distinct words"},
		{"distinct path prefixes", fill(8000, func(i int) string { return "path:.kb/d" + fmt.Sprint(i%20) }), ""},
		{"one long phrase", `"` + fill(8000, func(i int) string { return two(i % 40) }) + `"`, ""},
		{"excluded phrases", "a* " + fill(8000, func(i int) string { return `-"` + two(i) + ` ` + two(i+1) + `"` }), "more than 256 clauses"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := withinLimits(t, ix, tc.q)
			notes := strings.Join(c.Notes, "\n")
			if tc.note != "" && !strings.Contains(notes, tc.note) {
				t.Errorf("notes %q, want one saying %q", notes, tc.note)
			}
			if tc.note == "" && strings.Contains(notes, "left out") {
				t.Errorf("notes %q: nothing should have been left out", notes)
			}
		})
	}
	// The dictionary scan is bounded too.
	defer query.SetScanLimit(5000)()
	c := withinLimits(t, ix, fill(4000, func(i int) string { return "*" + two(i) + "*" }))
	if c.Scanned > 5001 {
		t.Errorf("scanned %d dictionary entries, over 5000", c.Scanned)
	}
}

// Whatever the query, a search's cost stays within its limits.
func FuzzQueryCost(f *testing.F) {
	for _, seed := range []string{"a* b* *c* ?d?", `"x y" -z +w tag:t1 path:.kb/d1 OR title:q*`, strings.Repeat("a* ", 300), strings.Repeat("*e* ", 300)} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, q string) {
		ix := costIndex(t)
		withinLimits(t, ix, q)
	})
}

// A path: filter matches every document below it, however many: filters
// are never cut short to bound a query's cost.
func TestPathFilterIsNeverCut(t *testing.T) {
	ix := costIndex(t)
	resp, err := ix.Search(context.Background(), query.Request{Query: "* path:.kb/", N: 1000, MaxTokens: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Results) != 400 {
		t.Errorf("path:.kb/ matched %d documents, want all 400", len(resp.Results))
	}
}

func TestMain(m *testing.M) {
	code := m.Run()
	if costIndexDir != "" {
		os.RemoveAll(costIndexDir)
	}
	os.Exit(code)
}
