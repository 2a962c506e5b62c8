package pgstore

import (
	"context"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/kbqdev/kbq/artifact"
	"github.com/kbqdev/kbq/compiler"
	"github.com/kbqdev/kbq/internal/postgres/pgread"
	"github.com/kbqdev/kbq/internal/postgres/pgtest"
	"github.com/kbqdev/kbq/internal/querytest"
	"github.com/kbqdev/kbq/internal/testkb"
	"github.com/kbqdev/kbq/query"
)

// words embeds a text as the normalised sum of a random vector per word.
type words struct{}

func (words) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, text := range texts {
		v := make([]float64, 16)
		for _, w := range strings.Fields(strings.ToLower(text)) {
			h := fnv.New64a()
			h.Write([]byte(strings.Trim(w, ".,#")))
			r := rand.New(rand.NewPCG(h.Sum64(), 1))
			for j := range v {
				v[j] += r.NormFloat64()
			}
		}
		var n float64
		for _, x := range v {
			n += x * x
		}
		out[i] = make([]float32, len(v))
		for j, x := range v {
			out[i][j] = float32(x / math.Sqrt(n+1e-9))
		}
	}
	return out, nil
}

func (words) Identity() artifact.Embeddings {
	return artifact.Embeddings{Provider: "test", Model: "words", Hash: "0", Dims: 16}
}

// vectorSource compiles files with vectors.
func vectorSource(t *testing.T, repo, commit string, files testkb.Files) *Source {
	t.Helper()
	dir := t.TempDir()
	if _, err := compiler.Build(context.Background(), files, compiler.BuildOptions{Out: dir, BuiltAt: testkb.BuiltAt, Options: compiler.Options{Embedder: words{}}}); err != nil {
		t.Fatal(err)
	}
	return sourceOf(t, dir, repo, commit)
}

var vectorFiles = testkb.Files{
	".kb/keys.md":   "# Keys\n\nRotate the signing key every year.\n",
	".kb/deploy.md": "# Deploy\n\nShip the release with a canary first.\n",
	".kb/cache.md":  "# Cache\n\nWarm the cache before traffic arrives.\n",
}

// Under pgvector (PGlite, simple queries only, no COPY), a publish stores
// a vector per chunk under an HNSW index, which SQL clients can rank by.
func TestPublishVectorsUnderPGvector(t *testing.T) {
	ctx := context.Background()
	url := pgtest.PGlite(t)
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	res, err := Publish(ctx, conn, vectorSource(t, "r", "a", vectorFiles), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.VectorsNote != "" || res.Vectors != 3 || res.Chunks != 3 {
		t.Fatalf("publish: %+v", res)
	}
	var index string
	if err := conn.QueryRow(ctx, `SELECT indexdef FROM pg_indexes WHERE indexname = 'kbq_chunk_vector_hnsw'`).Scan(&index); err != nil || !strings.Contains(index, "hnsw") {
		t.Errorf("index %q, %v", index, err)
	}
	q, _ := words{}.Embed(ctx, []string{"rotate the signing key"})
	var path string
	if err := conn.QueryRow(ctx, `SELECT path FROM kbq_chunk_vector ORDER BY embedding <=> $1::vector LIMIT 1`, vectorText(q[0])).Scan(&path); err != nil || path != ".kb/keys.md" {
		t.Errorf("nearest chunk %q, %v", path, err)
	}
	// A change rewrites its chunk's vector; the rest stay.
	changed := testkb.Files{".kb/keys.md": "# Keys\n\nRotate the signing key every month.\n", ".kb/deploy.md": vectorFiles[".kb/deploy.md"], ".kb/cache.md": vectorFiles[".kb/cache.md"]}
	if res, err = Publish(ctx, conn, vectorSource(t, "r", "b", changed), Options{Force: true}); err != nil || res.Vectors != 1 {
		t.Fatalf("one-file change: %+v %v", res, err)
	}
	var n int
	conn.QueryRow(ctx, `SELECT count(*) FROM kbq_chunk_vector`).Scan(&n)
	if n != 3 {
		t.Errorf("%d vectors after the change, want 3", n)
	}

	// kbq reads it back (simple queries too) and ranks by meaning as the
	// artifact does.
	repos, err := pgread.Fetch(ctx, conn, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	fromDB := querytest.OpenDir(t, repos.Repos[0].Dir)
	local := querytest.OpenDir(t, vectorSource(t, "r", "b", changed).Dir)
	for _, mode := range []string{query.ModeHybrid, query.ModeSemantic} {
		req := query.Request{Query: "rotate the signing key", N: 3, Mode: mode, Vector: q[0]}
		got, err := fromDB.Search(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		want, err := local.Search(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Results) == 0 || got.Results[0].Path != ".kb/keys.md" {
			t.Fatalf("%s: %+v first", mode, got.Results)
		}
		if d := querytest.Diff(got.Results, want.Results, 0); d != "" {
			t.Errorf("%s: %s", mode, d)
		}
	}
}

// Without pgvector, a publish says so and stores everything else.
func TestPublishWithoutPGvector(t *testing.T) {
	ctx := context.Background()
	conn := pgtest.Connect(t, pgtest.DB(t))
	res, err := Publish(ctx, conn, vectorSource(t, "r", "a", vectorFiles), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.VectorsNote, "no vector extension") || res.Vectors != 0 || res.Chunks != 3 {
		t.Errorf("publish: %+v", res)
	}
}
