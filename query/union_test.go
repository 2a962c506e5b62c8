package query_test

import (
	"context"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/kbqdev/kbq/internal/querytest"
	"github.com/kbqdev/kbq/internal/testkb"
	"github.com/kbqdev/kbq/query"
)

// unionCorpus makes n documents of words drawn from a small vocabulary,
// unevenly, so that terms have every document frequency.
func unionCorpus(n int, seed uint64) testkb.Files {
	words := strings.Fields(`deploy rollback release canary billing invoice retry backoff timeout queue
		worker cache index search ranking token schema migration database replica shard lock
		secret vault audit metric alert pager incident review owner service gateway proxy`)
	r := rand.New(rand.NewPCG(seed, 7))
	pick := func() string { return words[int(math.Floor(math.Pow(r.Float64(), 2)*float64(len(words))))] }
	files := testkb.Files{}
	for i := range n {
		var b strings.Builder
		fmt.Fprintf(&b, "---\ntags: [%s]\n---\n# %s %s\n\n", pick(), pick(), pick())
		for s := range 1 + r.IntN(3) {
			fmt.Fprintf(&b, "## Part %d %s\n\n", s, pick())
			for range 5 + r.IntN(40) {
				b.WriteString(pick() + " ")
			}
			b.WriteString("\n\n")
		}
		files[fmt.Sprintf(".kb/notes/doc-%03d.md", i)] = b.String()
	}
	return files
}

// Several artifacts searched as one rank as one artifact built from all
// their files: the same top 20, in the same order, with the same scores.
func TestUnionRanksAsOneArtifact(t *testing.T) {
	all := unionCorpus(90, 1)
	a, b := split(all, 3)
	one := open(t, all)
	u, err := query.NewUnion([]query.Part{{Name: "a", Index: open(t, a)}, {Name: "b", Index: open(t, b)}})
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		"deploy", "rollback canary", "billing invoice retry", "owner", "+queue worker", "secret -vault",
		`"retry backoff"`, "shard*", "title:deploy", "tag:billing gateway", "deploy OR proxy", "index search ranking token",
	} {
		got, want := ranksAlike(t, u, one, query.Request{Query: q, N: 20, AllScopes: true}, 1e-9)
		for _, g := range got.Results {
			if _, inA := a[g.Path]; inA != (g.Repo == "a") {
				t.Errorf("%q: %s labelled %q", q, g.Path, g.Repo)
			}
		}
		if got.Total != want.Total {
			t.Errorf("%q: total %d, want %d", q, got.Total, want.Total)
		}
	}
}

// An artifact of a union skips the chunks that cannot beat the N-th best
// result the artifacts searched before it found, and the union still ranks
// as one artifact. Each of these artifacts holds fewer documents than a
// search keeps, so only what the others found lets it skip.
func TestUnionSkipsBelowTheOthersBest(t *testing.T) {
	defer query.SetExactTotals(0)()
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1)) // one artifact after another
	all := unionCorpus(90, 5)
	one := open(t, all)
	query.SetExhaustive(one, true)
	var parts []query.Part
	rest := all
	for i := range 6 {
		var part testkb.Files
		if i < 5 {
			part, rest = split(rest, 6-i)
		} else {
			part = rest
		}
		parts = append(parts, query.Part{Name: fmt.Sprint("r", i), Index: open(t, part)})
	}
	u, err := query.NewUnion(parts)
	if err != nil {
		t.Fatal(err)
	}
	skipped := 0
	for _, q := range []string{"deploy", "rollback canary", "billing invoice retry", "owner gateway proxy", "+queue worker", "secret -vault"} {
		got, want := ranksAlike(t, u, one, query.Request{Query: q, N: 20, AllScopes: true}, 1e-9)
		if got.Total < want.Total {
			skipped++
			if got.TotalExact {
				t.Errorf("%q: total %d of %d, said to be exact", q, got.Total, want.Total)
			}
		}
	}
	if skipped == 0 {
		t.Error("no artifact skipped a chunk")
	}
}

// repo:NAME keeps one repository's results, -repo:NAME leaves them out,
// and an unknown name is an error naming the known ones.
func TestUnionRepoFilter(t *testing.T) {
	u, err := query.NewUnion([]query.Part{
		{Name: "api", Index: open(t, testkb.Files{".kb/deploy.md": "# Deploy\n\nDeploy the api with make deploy.\n"})},
		{Name: "web", Index: open(t, testkb.Files{".kb/deploy.md": "# Deploy\n\nDeploy the web app from the pipeline.\n"})},
	})
	if err != nil {
		t.Fatal(err)
	}
	for q, want := range map[string]string{"deploy repo:api": "api", "deploy -repo:api": "web", "deploy repo:WEB": "web", "deploy": "api web"} {
		resp, err := u.Search(context.Background(), query.Request{Query: q})
		if err != nil {
			t.Fatal(err)
		}
		var repos []string
		for _, r := range resp.Results {
			repos = append(repos, r.Repo)
		}
		if strings.Join(repos, " ") != want {
			t.Errorf("%q: repositories %v, want %s", q, repos, want)
		}
	}
	if _, err := u.Search(context.Background(), query.Request{Query: "deploy repo:nope"}); err == nil || !strings.Contains(err.Error(), "searched: api, web") {
		t.Errorf("unknown repo: %v", err)
	}
	if _, err := query.NewUnion([]query.Part{{Name: "x", Index: open(t, testkb.Files{".kb/a.md": "a"})}, {Name: "x", Index: open(t, testkb.Files{".kb/b.md": "b"})}}); err == nil {
		t.Error("two artifacts of one name")
	}
}

// Hybrid over several artifacts: the semantic channel over the union is
// the merge of each artifact's, and fuses with the union's words as one
// artifact's would; an artifact built with another model takes part by its
// words only, with a note.
func TestUnionHybrid(t *testing.T) {
	all := unionCorpus(60, 3)
	a, b := split(all, 2)
	words := wordVectors{dims: 48}
	openVec := func(files testkb.Files, e wordVectors) *query.Index {
		ix, err := query.Open(buildWithVectors(t, files, e))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ix.Close() })
		return ix
	}
	one := openVec(all, words)
	u, err := query.NewUnion([]query.Part{{Name: "a", Index: openVec(a, words)}, {Name: "b", Index: openVec(b, words)}})
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"deploy rollback", "billing invoice retry", "secret vault audit"} {
		vec, _ := words.Embed(context.Background(), []string{q})
		for _, mode := range []string{query.ModeHybrid, query.ModeSemantic} {
			ranksAlike(t, u, one, query.Request{Query: q, N: 10, AllScopes: true, Mode: mode, Vector: vec[0], Floor: query.FloorOff}, 1e-6)
		}
	}
	odd, err := query.NewUnion([]query.Part{{Name: "a", Index: openVec(a, words)}, {Name: "b", Index: openVec(b, wordVectors{dims: 32})}})
	if err != nil {
		t.Fatal(err)
	}
	vec, _ := words.Embed(context.Background(), []string{"deploy"})
	resp, err := odd.Search(context.Background(), query.Request{Query: "deploy", N: 10, AllScopes: true, Vector: vec[0]})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(resp.Notes, "\n"), "b: searched by words only") {
		t.Errorf("notes %q", resp.Notes)
	}
	// With the query embedded by b's model too, b is searched by meaning,
	// with no note: one vector per distinct model.
	if models := odd.Models(); len(models) != 2 || models[1].Dims != 32 {
		t.Fatalf("models %+v, want a's and b's", models)
	}
	vec32, _ := wordVectors{dims: 32}.Embed(context.Background(), []string{"deploy"})
	resp, err = odd.Search(context.Background(), query.Request{Query: "deploy", N: 10, AllScopes: true, Mode: query.ModeSemantic, Vector: vec[0],
		Vectors: []query.ModelVector{{Model: odd.Models()[1], Vector: vec32[0]}}})
	if err != nil {
		t.Fatal(err)
	}
	repos := map[string]bool{}
	for _, r := range resp.Results {
		repos[r.Repo] = true
	}
	if len(resp.Notes) != 0 || !repos["a"] || !repos["b"] {
		t.Errorf("semantic over two models: repositories %v, notes %q; want both, no note", repos, resp.Notes)
	}
	// A first artifact without vectors does not switch meaning off for
	// the others.
	plain, err := query.NewUnion([]query.Part{{Name: "a", Index: open(t, a)}, {Name: "b", Index: openVec(b, words)}})
	if err != nil {
		t.Fatal(err)
	}
	if m := plain.Mode(query.Request{}); m != query.ModeHybrid {
		t.Errorf("mode %s over a union where only b has vectors, want hybrid", m)
	}
	resp, err = plain.Search(context.Background(), query.Request{Query: "deploy", N: 10, AllScopes: true, Mode: query.ModeSemantic, Vector: vec[0]})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Results) == 0 || !strings.Contains(strings.Join(resp.Notes, "\n"), "a: searched by words only") {
		t.Errorf("semantic where the first artifact has no vectors: %d results, notes %q", len(resp.Results), resp.Notes)
	}
}

// split deals files out, in path order: every every-th to a, the rest to b.
func split(files testkb.Files, every int) (a, b testkb.Files) {
	a, b = testkb.Files{}, testkb.Files{}
	for i, p := range slices.Sorted(maps.Keys(files)) {
		if i%every == 0 {
			a[p] = files[p]
		} else {
			b[p] = files[p]
		}
	}
	return a, b
}

// A searcher is an artifact or several.
type searcher interface {
	Search(context.Context, query.Request) (*query.Response, error)
}

// ranksAlike runs req on got and want, and fails t unless got ranks as
// want does: the same paths in order, scores within tol.
func ranksAlike(t *testing.T, got, want searcher, req query.Request, tol float64) (g, w *query.Response) {
	t.Helper()
	w, err := want.Search(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if g, err = got.Search(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if d := querytest.Diff(g.Results, w.Results, tol); d != "" {
		t.Errorf("%s %q: %s", req.Mode, req.Query, d)
	}
	return g, w
}
