package query

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// The floors of a hybrid search: it answers only when a result is a
// strong match by one channel or a fair match by both, and then keeps the
// fair matches, the second halves that match the first result included;
// a lexical or semantic search keeps each result that clears its own.
func TestApplyFloor(t *testing.T) {
	const sim = 0.45 // all-MiniLM-L6-v2's floor
	r := func(path string, lexical, similarity, feedback float64) Result {
		return Result{Path: path, Lexical: lexical, Similarity: similarity, feedback: feedback}
	}
	for _, c := range []struct {
		name    string
		results []Result
		hybrid  bool
		floor   float64
		want    []string
	}{
		{"a common word alone answers nothing", []Result{r("a", 0.17, 0, 0), r("b", 0.12, 0.3, 0)}, true, 1, nil},
		{"a lexical search keeps it", []Result{r("a", 0.17, 0, 0), r("b", 0.12, 0.3, 0)}, false, 1, []string{"a"}},
		{"near the topic alone answers nothing", []Result{r("a", 0, 0.48, 0)}, true, 1, nil},
		{"a strong lexical match answers", []Result{r("a", 0.21, 0, 0), r("b", 0.11, 0, 0), r("c", 0.05, 0.2, 0)}, true, 1, []string{"a", "b"}},
		{"a strong similarity answers", []Result{r("a", 0, 0.51, 0), r("b", 0, 0.41, 0)}, true, 1, []string{"a", "b"}},
		{"a fair match of both answers", []Result{r("a", 0.11, 0.41, 0)}, true, 1, []string{"a"}},
		{"the second half is kept", []Result{r("a", 0.3, 0.6, 0), r("b", 0.02, 0.2, 0.35), r("c", 0.02, 0.2, 0.1)}, true, 1, []string{"a", "b"}},
		{"a second half answers nothing", []Result{r("a", 0.12, 0.3, 0.9)}, true, 1, nil},
		{"--min-score scales the bars", []Result{r("a", 0.21, 0, 0)}, true, 2, nil},
		{"--min-score 0.5", []Result{r("a", 0.11, 0, 0)}, true, 0.5, []string{"a"}},
		{"--min-score 0", []Result{r("a", 0.01, 0, 0)}, true, FloorOff, []string{"a"}},
	} {
		resp := &Response{Results: slices.Clone(c.results)}
		applyFloor(resp, c.floor, sim, c.hybrid)
		if got := pathsOf(resp.Results); !slices.Equal(got, c.want) {
			t.Errorf("%s: kept %v, want %v", c.name, got, c.want)
		}
		if len(c.want) == 0 && len(resp.Notes) == 0 {
			t.Errorf("%s: nothing kept, and no note says so", c.name)
		}
	}
}

// A near-copy of a result goes after every other candidate; with a
// diversity, a result like those above it gives way to a less relevant
// one unlike them; without vectors the order stands.
func TestDiversify(t *testing.T) {
	ranked := []Result{{Path: "a", Score: 1}, {Path: "a-copy", Score: 0.9}, {Path: "b", Score: 0.8}, {Path: "c", Score: 0.5}}
	vecs := map[string][]float32{"a": {1, 0, 0}, "a-copy": {0.99, 0.05, 0}, "b": {0.8, 0.6, 0}, "c": {0, 0, 1}}
	for _, c := range []struct {
		diversity float64
		n         int
		want      []string
	}{
		{0, 4, []string{"a", "b", "c", "a-copy"}},
		{0, 2, []string{"a", "b"}},
		{0.5, 3, []string{"a", "c", "b"}},
	} {
		got := pathsOf(diversifyWith(ranked, c.n, c.diversity, func(r Result) []float32 { return vecs[r.Path] }))
		if !slices.Equal(got, c.want) {
			t.Errorf("diversity %g, %d: %v, want %v", c.diversity, c.n, got, c.want)
		}
	}
	if got := pathsOf(diversify(ranked, 3, 0.5)); !slices.Equal(got, []string{"a", "a-copy", "b"}) {
		t.Errorf("without vectors: %v, want the order as ranked", got)
	}
}

// A document only the meaning found, with a similarity under the model's
// floor, ranks below every strong match by words, though the fusion's
// scaled scores put it above one.
func TestWeakMeaningBelowWords(t *testing.T) {
	lex := &Response{Results: []Result{
		{Path: "a", Score: 10, Lexical: 0.5, Channels: []string{ModeLexical}},
		{Path: "b", Score: 5, Lexical: 0.25, Channels: []string{ModeLexical}},
		{Path: "c", Score: 1, Lexical: 0.05, Channels: []string{ModeLexical}},
	}}
	sem := func(similarity float64) *Response {
		return &Response{Results: []Result{
			{Path: "w", Score: similarity, Similarity: similarity, Channels: []string{ModeSemantic}},
			{Path: "x", Score: 0.1, Similarity: 0.1, Channels: []string{ModeSemantic}},
		}}
	}
	order := func(similarity float64) []string {
		resp, err := fuse(Request{N: 5}, lex, sem(similarity), Ranking{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return pathsOf(resp.Results)
	}
	// At the default floor (0.30), w at 0.28 goes below b; at 0.5 it keeps
	// the place its fused score gives it, above b.
	if got, want := order(0.28), []string{"a", "b", "w", "c", "x"}; !slices.Equal(got, want) {
		t.Errorf("similarity 0.28: %v, want %v", got, want)
	}
	if got, want := order(0.5), []string{"a", "w", "b", "c", "x"}; !slices.Equal(got, want) {
		t.Errorf("similarity 0.5: %v, want %v", got, want)
	}
}

func pathsOf(rs []Result) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Path)
	}
	return out
}

// BenchmarkDiversify re-orders a hybrid search's 30 candidates (ten
// results asked for) of 384-value vectors, as a search of MiniLM's
// vectors does.
func BenchmarkDiversify(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	ranked := make([]Result, 50)
	vecs := make(map[string][]float32)
	for i := range ranked {
		ranked[i] = Result{Path: fmt.Sprint(i), Score: 1 / float64(i+1)}
		v := make([]float32, 384)
		for j := range v {
			v[j] = float32(rng.NormFloat64())
		}
		vecs[ranked[i].Path] = v
	}
	for b.Loop() {
		diversifyWith(ranked, 10, 0, func(r Result) []float32 { return vecs[r.Path] })
	}
}
