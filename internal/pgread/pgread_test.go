package pgread_test

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/kbqdev/kbq/compiler"
	"github.com/kbqdev/kbq/internal/pgread"
	"github.com/kbqdev/kbq/internal/pgstore"
	"github.com/kbqdev/kbq/internal/pgtest"
	"github.com/kbqdev/kbq/internal/testkb"
	"github.com/kbqdev/kbq/query"
)

func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.Stop()
	os.Exit(code)
}

// publish compiles files and publishes them as repo at commit.
func publish(t *testing.T, conn *pgx.Conn, repo, commit string, files testkb.Files) *query.Index {
	t.Helper()
	dir := testkb.Build(t, files)
	ix, err := query.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	docs, err := ix.Documents()
	if err != nil {
		t.Fatal(err)
	}
	fs, err := pgstore.ArtifactFiles(dir, ix.Manifest)
	if err != nil {
		t.Fatal(err)
	}
	src := &pgstore.Source{Repo: repo, Commit: commit, Header: ix.Manifest, Documents: docs, Chunks: ix.Chunks, Dir: dir, Files: fs}
	if _, err := pgstore.Publish(context.Background(), conn, src, pgstore.Options{Force: true}); err != nil {
		t.Fatal(err)
	}
	return ix
}

// corpus is the shared PowerShell docs, or a generated stand-in.
func corpus(t *testing.T) (testkb.Files, []string) {
	f, err := os.Open(filepath.Join("..", "..", "..", "shared", "corpora", "powershell-docs.tar.gz"))
	if err != nil {
		files := testkb.Files{}
		for i := range 300 {
			files[fmt.Sprintf(".kb/n/%03d.md", i)] = fmt.Sprintf("# Note %d\n\nDeploy %d the service; roll back release %d with care and retry.\n", i, i%7, i%11)
		}
		return files, []string{"deploy", "roll back", "retry care", "release"}
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	files := testkb.Files{}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag != tar.TypeReg || !strings.HasSuffix(h.Name, ".md") {
			continue
		}
		data, _ := io.ReadAll(tr)
		if compiler.Validate(h.Name, data).Errors() == 0 {
			files[".kb/"+h.Name] = string(data)
		}
	}
	return files, []string{"execution policy", "set an environment variable for the current session", "retries",
		"pipeline", "get child items recursively", "start a background job and wait", `"remote session"`, "+module -install"}
}

// A repository read from the database ranks exactly as its own artifact:
// the same top 10, in order, with the same scores; several rank as one.
func TestReadRanksAsTheArtifact(t *testing.T) {
	ctx := context.Background()
	url := pgtest.DB(t)
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	files, queries := corpus(t)
	local := publish(t, conn, "github.com/org/docs", "a", files)
	publish(t, conn, "other", "a", testkb.Files{".kb/x.md": "# X\n\nAn execution pipeline of retries.\n"})

	repos, err := pgread.Fetch(ctx, conn, t.TempDir(), []string{"github.com/org/docs"})
	if err != nil {
		t.Fatal(err)
	}
	if len(repos) != 1 || repos[0].Commit != "a" {
		t.Fatalf("fetched %+v", repos)
	}
	fromDB, err := query.Open(repos[0].Dir)
	if err != nil {
		t.Fatal(err)
	}
	defer fromDB.Close()
	for _, q := range queries {
		req := query.Request{Query: q, N: 10, AllScopes: true}
		want, err := local.Search(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		got, err := fromDB.Search(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if len(want.Results) == 0 || len(got.Results) != len(want.Results) {
			t.Fatalf("%q: %d results, want %d", q, len(got.Results), len(want.Results))
		}
		for k := range want.Results {
			if g, w := got.Results[k], want.Results[k]; g.Path != w.Path || math.Abs(g.Score-w.Score) > 1e-12 {
				t.Errorf("%q: result %d is %s (%g), want %s (%g)", q, k, g.Path, g.Score, w.Path, w.Score)
				break
			}
		}
	}
	all, err := pgread.Fetch(ctx, conn, t.TempDir(), nil)
	if err != nil || len(all) != 2 {
		t.Fatalf("every repository: %+v %v", all, err)
	}
	if _, err := pgread.Fetch(ctx, conn, t.TempDir(), []string{"nope"}); err == nil || !strings.Contains(err.Error(), "published: github.com/org/docs, other") {
		t.Errorf("unknown repository: %v", err)
	}
}

// A second fetch reads nothing it has; a republish sends nothing the
// database has.
func TestFilesAreSentAndFetchedOnce(t *testing.T) {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, pgtest.DB(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	files := testkb.Files{".kb/a.md": "# A\n\nAlpha.\n"}
	publish(t, conn, "r", "a", files)
	cache := t.TempDir()
	first, err := pgread.Fetch(ctx, conn, cache, nil)
	if err != nil {
		t.Fatal(err)
	}
	blobs, _ := os.ReadDir(filepath.Join(cache, "files"))
	for _, b := range blobs {
		os.Chmod(filepath.Join(cache, "files", b.Name()), 0o644)
		os.WriteFile(filepath.Join(cache, "files", b.Name()), []byte("x"), 0o644) // a fetch that reads them again would not see this
	}
	second, err := pgread.Fetch(ctx, conn, cache, nil)
	if err != nil || second[0].Dir != first[0].Dir {
		t.Fatalf("second fetch: %+v %v", second, err)
	}
	var n int
	conn.QueryRow(ctx, `SELECT count(*) FROM kbq_file`).Scan(&n)
	if n == 0 {
		t.Fatal("no files were published")
	}
}

// A database set up by a newer kbc, or holding nothing, says so.
func TestFetchErrors(t *testing.T) {
	ctx := context.Background()
	url := pgtest.DB(t)
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := pgread.Fetch(ctx, conn, t.TempDir(), nil); err == nil || !strings.Contains(err.Error(), "no kbq schema") {
		t.Errorf("empty database: %v", err)
	}
	if err := pgstore.Migrate(ctx, conn); err != nil {
		t.Fatal(err)
	}
	if _, err := pgread.Fetch(ctx, conn, t.TempDir(), nil); err == nil || !strings.Contains(err.Error(), "nothing was published there yet") {
		t.Errorf("no repository: %v", err)
	}
	pgtest.Exec(t, url, `UPDATE kbq_schema SET version = 99`)
	if _, err := pgread.Fetch(ctx, conn, t.TempDir(), nil); err == nil || !strings.Contains(err.Error(), "newer than this kbq reads (1): upgrade kbq") {
		t.Errorf("newer schema: %v", err)
	}
}

// kbq reads with a role granted only what docs/postgres.md lists.
func TestFetchAsReadOnlyRole(t *testing.T) {
	ctx := context.Background()
	url := pgtest.DB(t)
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	publish(t, conn, "r", "a", testkb.Files{".kb/a.md": "# A\n\nAlpha.\n"})
	pgtest.Exec(t, url, pgstore.ReadOnlyGrants("kbq_reader")...)
	reader, err := pgx.Connect(ctx, strings.Replace(url, "kbq@", "kbq_reader@", 1))
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close(ctx)
	repos, err := pgread.Fetch(ctx, reader, t.TempDir(), nil)
	if err != nil || len(repos) != 1 {
		t.Fatalf("as a reader: %+v %v", repos, err)
	}
	ix, err := query.Open(repos[0].Dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	resp, err := ix.Search(ctx, query.Request{Query: "alpha"})
	if err != nil || len(resp.Results) != 1 {
		t.Errorf("search: %v %v", resp, err)
	}
}

// SciFact's training queries rank the same from the database as from the
// artifact: lexical and, by the same files, every mode.
func TestReadRanksSciFactAsTheArtifact(t *testing.T) {
	if testing.Short() {
		t.Skip("publishes SciFact")
	}
	files, queries, _ := testkb.SciFact(t, filepath.Join("..", "..", "..", "shared", "datasets", "scifact"))
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, pgtest.DB(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	local := publish(t, conn, "scifact", "a", files)
	repos, err := pgread.Fetch(ctx, conn, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	fromDB, err := query.Open(repos[0].Dir)
	if err != nil {
		t.Fatal(err)
	}
	defer fromDB.Close()
	same := 0
	for _, q := range queries {
		req := query.Request{Query: q, N: 10, Mode: query.ModeLexical}
		want, err := local.Search(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		got, err := fromDB.Search(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		ok := len(got.Results) == len(want.Results)
		for k := 0; ok && k < len(want.Results); k++ {
			ok = got.Results[k].Path == want.Results[k].Path && got.Results[k].Score == want.Results[k].Score
		}
		if ok {
			same++
		}
	}
	if same != len(queries) || same < 800 {
		t.Errorf("%d of %d queries rank the same", same, len(queries))
	}
}
