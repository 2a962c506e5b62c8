package query_test

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/kbqdev/kbq/artifact"
	"github.com/kbqdev/kbq/compiler"
	"github.com/kbqdev/kbq/internal/testkb"
	"github.com/kbqdev/kbq/query"
)

// wordVectors embeds a text as the normalised sum of a random vector per
// word, the same for the same word in every run.
type wordVectors struct{ dims int }

func (w wordVectors) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, text := range texts {
		v := make([]float64, w.dims)
		for _, word := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return r < 'a' || r > 'z' }) {
			h := fnv.New64a()
			h.Write([]byte(word))
			r := rand.New(rand.NewPCG(h.Sum64(), 7))
			for j := range v {
				v[j] += r.NormFloat64()
			}
		}
		v[0] += 1e-3
		var n float64
		for _, x := range v {
			n += x * x
		}
		out[i] = make([]float32, w.dims)
		for j, x := range v {
			out[i][j] = float32(x / math.Sqrt(n))
		}
	}
	return out, nil
}

func (w wordVectors) Identity() artifact.Embeddings {
	return artifact.Embeddings{Provider: "test", Model: "words", Hash: "0", Dims: w.dims}
}

// buildWithVectors compiles files, embedded by embedder, into a new
// directory.
func buildWithVectors(t *testing.T, files testkb.Files, embedder wordVectors) string {
	t.Helper()
	dir := t.TempDir()
	opts := compiler.BuildOptions{Out: dir, BuiltAt: testkb.BuiltAt, Options: compiler.Options{Embedder: embedder}}
	if _, err := compiler.Build(context.Background(), files, opts); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestSemanticCandidates: the chunks the vectors' bits choose, ranked by
// their stored vectors, give the ranking that all of them give.
func TestSemanticCandidates(t *testing.T) {
	embedder := wordVectors{dims: 96}
	files := corpus(rand.New(rand.NewPCG(3, 4)), 600)
	dir := buildWithVectors(t, files, embedder)
	ix, err := query.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	search := func(q string, candidates int) []string {
		defer query.SetSemanticCandidates(candidates)()
		vec, _ := embedder.Embed(context.Background(), []string{q})
		resp, err := ix.Search(context.Background(), query.Request{Query: q, Vector: vec[0], Mode: query.ModeSemantic, N: 10, Chunks: true})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range resp.Results {
			got = append(got, r.Path+r.Heading)
			if r.Content == "" || !strings.Contains(files[r.Path], r.Content) {
				t.Errorf("%q: %s holds no content %q", q, r.Path, r.Content)
			}
		}
		if resp.Total < 1000 {
			t.Fatalf("%d chunks in force: too few for the bits to choose among", resp.Total)
		}
		return got
	}
	r := rand.New(rand.NewPCG(5, 6))
	same, queries := 0, 40
	for range queries {
		q := sentence(r, 3)
		exact := search(q, 1<<30)
		if len(exact) != 10 {
			t.Fatalf("%q: %d results", q, len(exact))
		}
		chosen := search(q, 300) // of more than 1,000 chunks in force
		if strings.Join(chosen[:3], "|") == strings.Join(exact[:3], "|") {
			same++
		}
	}
	if same < queries*9/10 {
		t.Errorf("the first three results differ from exact ranking's for %d of %d queries", queries-same, queries)
	}
}

// TestEmbedWhileWarming: a query embedded by the search (Request.Embed),
// while it readies the stored vectors, ranks as the same query given its
// vector, in a fresh index and in one already warmed, in both modes that
// use vectors; a damaged vectors file is reported, not met half-read.
func TestEmbedWhileWarming(t *testing.T) {
	embedder := wordVectors{dims: 64}
	files := corpus(rand.New(rand.NewPCG(8, 9)), 200)
	dir := buildWithVectors(t, files, embedder)
	paths := func(ix *query.Index, req query.Request) string {
		resp, err := ix.Search(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range resp.Results {
			got = append(got, r.Path+r.Heading)
			if r.Content == "" || !strings.Contains(files[r.Path], r.Content) {
				t.Errorf("%q, mode %s: %s holds no content %q", req.Query, req.Mode, r.Path, r.Content)
			}
		}
		if len(got) == 0 {
			t.Fatalf("%q, mode %s: no results", req.Query, req.Mode)
		}
		return strings.Join(got, "|")
	}
	r := rand.New(rand.NewPCG(10, 11))
	for _, mode := range []string{query.ModeSemantic, query.ModeHybrid} {
		q := sentence(r, 3)
		vec, _ := embedder.Embed(context.Background(), []string{q})
		given := query.Request{Query: q, Vector: vec[0], Mode: mode, N: 10}
		embedded := query.Request{Query: q, Mode: mode, N: 10, Embed: func(ctx context.Context) ([]float32, error) {
			v, err := embedder.Embed(ctx, []string{q})
			return v[0], err
		}}
		fresh, err := query.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		got := paths(fresh, embedded)
		if want := paths(fresh, given); got != want {
			t.Errorf("mode %s, fresh index: embedded by the search\n%s\nwant\n%s", mode, got, want)
		}
		if again := paths(fresh, embedded); again != got {
			t.Errorf("mode %s, warmed index: embedded by the search\n%s\nwant\n%s", mode, again, got)
		}
		fresh.Close()
	}

	ix, err := query.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	vectors := filepath.Join(ix.Dir, ix.Manifest.Index, artifact.VectorsFile)
	ix.Close()
	data, err := os.ReadFile(vectors)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(vectors, data[:len(data)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	ix, err = query.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	for _, mode := range []string{query.ModeSemantic, query.ModeHybrid} {
		_, err := ix.Search(context.Background(), query.Request{Query: "any", Mode: mode, N: 10, Embed: func(ctx context.Context) ([]float32, error) {
			v, err := embedder.Embed(ctx, []string{"any"})
			return v[0], err
		}})
		if !errors.Is(err, artifact.ErrCorrupt) {
			t.Errorf("mode %s, vectors cut short: %v, want a corrupt artifact", mode, err)
		}
	}
}

// The feedback query of a hybrid search is the first result's rarest
// words the question lacks, rarest first: what its follow-up shares.
func TestFeedbackQuery(t *testing.T) {
	ix := open(t, memories(
		"Blocker for the auth release: the license scan flags an unapproved dependency.",
		"Fixed the license scan flags by replacing it with the approved fork; auth can ship.",
		"The auth service listens on port 8080.",
		"The auth release notes are in the wiki.",
		"Blocker for the billing release: the staging database is out of disk.",
	))
	got := query.FeedbackQuery(ix, "Is the blocker of the auth release resolved?", "Blocker for the auth release: the license scan flags an unapproved dependency.")
	// Those only the blocker holds first, then those its fix shares; none
	// of the question's.
	if want := "unapproved dependency license scan flags"; got != want {
		t.Errorf("feedback query %q, want %q", got, want)
	}
}

// Both halves of an answer in two memories: a blocker, and its fix in a
// later session that shares the blocker's words more than the question's,
// are both in a hybrid search's top 5, above the other blockers that
// match the question's words; by words alone the fix is not.
func TestSecondHalf(t *testing.T) {
	files := memories(
		"Blocker for the auth release: the license scan flags an unapproved dependency.",
		"Blocker for the billing release: the staging database is out of disk.",
		"Blocker for the search release: the signing key for the mobile build expired.",
		"Blocker for the gateway release: the migration locks the orders table.",
		"Blocker for the ingest release: the CDN serves stale assets after deploys.",
		"Blocker for the reports release: the SSO callback URL is not registered.",
		"The auth service listens on port 8080.",
		"Demoed the auth changes to the platform team.",
		"Fixed the license scan flags by replacing it with the approved fork; auth can ship.",
	)
	embedder := wordVectors{dims: 96}
	ix, err := query.Open(buildWithVectors(t, files, embedder))
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	q := "Is the blocker of the auth release resolved, and how?"
	vec, _ := embedder.Embed(context.Background(), []string{q})
	top5 := func(mode string) []string {
		return search(t, ix, query.Request{Query: q, Vector: vec[0], Mode: mode, N: 5})
	}
	blocker, fix := ".kb/memories/001-note.md", ".kb/memories/009-note.md"
	if got := top5(query.ModeHybrid); !slices.Contains(got, blocker) || !slices.Contains(got, fix) {
		t.Errorf("hybrid top 5 %v: want both %s and %s", got, blocker, fix)
	}
	if got := top5(query.ModeLexical); slices.Contains(got, fix) {
		t.Errorf("lexical top 5 %v holds the fix: the test shows nothing", got)
	}
}

// memories are the files of one-line memories, numbered from 1 and a day
// apart.
func memories(texts ...string) testkb.Files {
	files := testkb.Files{}
	for i, text := range texts {
		files[fmt.Sprintf(".kb/memories/%03d-note.md", i+1)] = fmt.Sprintf("---\nid: %d\ncreated: 2025-01-%02dT09:00:00Z\n---\n%s\n", i+1, i+1, text)
	}
	return files
}

// TestHybridTakesTheWordsResults: the semantic channel of a hybrid search
// gives a document the words found its score on their result, without
// reading it, and the search answers as when it reads every one.
func TestHybridTakesTheWordsResults(t *testing.T) {
	embedder := wordVectors{dims: 96}
	r := rand.New(rand.NewPCG(5, 6))
	files := corpus(r, 300)
	dir := buildWithVectors(t, files, embedder)
	ix, err := query.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	search := func(req query.Request, await bool) *query.Response {
		t.Helper()
		defer query.SetHybridWords(await)()
		vec, _ := embedder.Embed(context.Background(), []string{req.Query})
		req.Mode, req.Vector, req.MaxTokens = query.ModeHybrid, vec[0], 1<<20
		resp, err := ix.Search(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	shared := 0
	for i := range 20 {
		q := sentence(r, 1+i%4)
		for _, req := range []query.Request{{Query: q, N: 10}, {Query: q, N: 60}, {Query: q, N: 10, Chunks: true}} {
			taken, read := search(req, true), search(req, false)
			if len(read.Results) == 0 {
				t.Fatalf("%q: no results", q)
			}
			for _, res := range taken.Results {
				if len(res.Channels) == 2 {
					shared++
				}
			}
			if diff := hybridDiff(taken, read); diff != "" {
				t.Errorf("%q (n %d, chunks %v): with the words' results taken, %s", q, req.N, req.Chunks, diff)
			}
		}
	}
	if shared == 0 {
		t.Error("no result was found by both channels: nothing taken")
	}
}

// hybridDiff says how two answers differ, scores to the last bit.
func hybridDiff(a, b *query.Response) string {
	if len(a.Results) != len(b.Results) {
		return fmt.Sprintf("%d results against %d", len(a.Results), len(b.Results))
	}
	for i, x := range a.Results {
		y := b.Results[i]
		if x.Path != y.Path || x.Lines != y.Lines || !slices.Equal(x.Channels, y.Channels) || x.Snippet != y.Snippet || x.Content != y.Content ||
			x.Score != y.Score || x.Lexical != y.Lexical || x.Similarity != y.Similarity || !reflect.DeepEqual(x, y) {
			return fmt.Sprintf("result %d: %s lines %v %v score %v (%v, %v), against %s lines %v %v score %v (%v, %v)",
				i, x.Path, x.Lines, x.Channels, x.Score, x.Lexical, x.Similarity, y.Path, y.Lines, y.Channels, y.Score, y.Lexical, y.Similarity)
		}
	}
	return ""
}
