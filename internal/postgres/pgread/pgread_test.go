package pgread_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/kbqdev/kbq/internal/postgres/pgread"
	"github.com/kbqdev/kbq/internal/postgres/pgstore"
	"github.com/kbqdev/kbq/internal/postgres/pgstoretest"
	"github.com/kbqdev/kbq/internal/postgres/pgtest"
	"github.com/kbqdev/kbq/internal/querytest"
	"github.com/kbqdev/kbq/internal/testkb"
	"github.com/kbqdev/kbq/query"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// publish compiles files, publishes them as repo at commit, and returns
// the artifact.
func publish(t *testing.T, conn *pgx.Conn, repo, commit string, files testkb.Files) *query.Index {
	t.Helper()
	return querytest.OpenDir(t, pgstoretest.PublishOver(t, conn, repo, commit, files))
}

// fetched fetches repository name from the database and opens it.
func fetched(t *testing.T, conn *pgx.Conn, name string) (*query.Index, pgread.Repo) {
	t.Helper()
	f, err := pgread.Fetch(context.Background(), conn, t.TempDir(), []string{name})
	if err != nil {
		t.Fatal(err)
	}
	repos := f.Repos
	if len(repos) != 1 || repos[0].Name != name {
		t.Fatalf("fetched %+v", repos)
	}
	return querytest.OpenDir(t, repos[0].Dir), repos[0]
}

// corpus is the shared PowerShell docs, or a generated stand-in.
func corpus(t *testing.T) (testkb.Files, []string) {
	files, ok := testkb.Corpus(t, filepath.Join("..", "..", "..", "..", "shared", "corpora", "powershell-docs.tar.gz"))
	if !ok {
		files := testkb.Files{}
		for i := range 300 {
			files[fmt.Sprintf(".kb/n/%03d.md", i)] = fmt.Sprintf("# Note %d\n\nDeploy %d the service; roll back release %d with care and retry.\n", i, i%7, i%11)
		}
		return files, []string{"deploy", "roll back", "retry care", "release"}
	}
	return files, []string{"execution policy", "set an environment variable for the current session", "retries",
		"pipeline", "get child items recursively", "start a background job and wait", `"remote session"`, "+module -install"}
}

// ranksAlike fails t unless got ranks req as want does, scores included.
func ranksAlike(t *testing.T, got, want *query.Index, req query.Request) bool {
	t.Helper()
	w, err := want.Search(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	g, err := got.Search(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if d := querytest.Diff(g.Results, w.Results, 0); d != "" {
		t.Errorf("%q: %s", req.Query, d)
		return false
	}
	return true
}

// A repository read from the database ranks exactly as its own artifact:
// the same top 10, in order, with the same scores; several rank as one.
func TestReadRanksAsTheArtifact(t *testing.T) {
	ctx := context.Background()
	url := pgtest.DB(t)
	conn := pgtest.Connect(t, url)
	files, queries := corpus(t)
	local := publish(t, conn, "github.com/org/docs", "a", files)
	publish(t, conn, "other", "a", testkb.Files{".kb/x.md": "# X\n\nAn execution pipeline of retries.\n"})

	fromDB, repo := fetched(t, conn, "github.com/org/docs")
	if repo.Commit != "a" {
		t.Errorf("fetched %+v", repo)
	}
	for _, q := range queries {
		ranksAlike(t, fromDB, local, query.Request{Query: q, N: 10, AllScopes: true})
	}
	all, err := pgread.Fetch(ctx, conn, t.TempDir(), nil)
	if err != nil || len(all.Repos) != 2 {
		t.Fatalf("every repository: %+v %v", all, err)
	}
	if _, err := pgread.Fetch(ctx, conn, t.TempDir(), []string{"nope"}); err == nil || !strings.Contains(err.Error(), "not published in the database, or not permitted; published and permitted: github.com/org/docs, other") {
		t.Errorf("unknown repository: %v", err)
	}
}

// A second fetch reads nothing it has; a republish sends nothing the
// database has.
func TestFilesAreSentAndFetchedOnce(t *testing.T) {
	ctx := context.Background()
	conn := pgtest.Connect(t, pgtest.DB(t))
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
	if err != nil || second.Repos[0].Dir != first.Repos[0].Dir {
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
	conn := pgtest.Connect(t, url)
	if _, err := pgread.Fetch(ctx, conn, t.TempDir(), nil); err == nil || !strings.Contains(err.Error(), "no kbq schema") {
		t.Errorf("empty database: %v", err)
	}
	if err := pgstore.Migrate(ctx, conn); err != nil {
		t.Fatal(err)
	}
	if _, err := pgread.Fetch(ctx, conn, t.TempDir(), nil); err == nil || !strings.Contains(err.Error(), "nothing was published there yet") {
		t.Errorf("no repository: %v", err)
	}
	pgtest.Exec(t, url, `DELETE FROM kbq_schema`)
	if _, err := pgread.Fetch(ctx, conn, t.TempDir(), nil); err == nil || !strings.Contains(err.Error(), "kbq_schema table holds no version") {
		t.Errorf("empty kbq_schema: %v", err)
	}
	pgtest.Exec(t, url, `INSERT INTO kbq_schema (version) VALUES (99)`)
	if _, err := pgread.Fetch(ctx, conn, t.TempDir(), nil); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("newer than this kbq reads (%d): upgrade kbq", pgread.SchemaVersion)) {
		t.Errorf("newer schema: %v", err)
	}
}

// A repository whose rows cannot be read (a name kbc publish refuses, a
// file outside its artifact, a hash that is not one) is left out with a
// note, and the others are read; named, it is an error.
func TestDamagedRowsLeaveTheirRepositoryOut(t *testing.T) {
	ctx := context.Background()
	url := pgtest.DB(t)
	conn := pgtest.Connect(t, url)
	publish(t, conn, "good", "a", testkb.Files{".kb/a.md": "# A\n\nAlpha.\n"})
	publish(t, conn, "escape", "a", testkb.Files{".kb/b.md": "# B\n\nBeta.\n"})
	publish(t, conn, "outside", "a", testkb.Files{".kb/c.md": "# C\n\nGamma.\n"})
	publish(t, conn, "long", "a", testkb.Files{".kb/d.md": "# D\n\nDelta.\n"})
	pgtest.Exec(t, url, "UPDATE kbq_repo SET name = E'esc\\x1b]0;owned\\x07' WHERE name = 'escape'",
		"UPDATE kbq_repo SET name = repeat('x', 300) WHERE name = 'long'",
		`UPDATE kbq_repo_file SET name = '../../etc/passwd' WHERE repo_id = (SELECT id FROM kbq_repo WHERE name = 'outside') AND name = 'manifest.json'`)
	got, err := pgread.Fetch(ctx, conn, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Repos) != 1 || got.Repos[0].Name != "good" || len(got.Notes) != 3 {
		t.Fatalf("fetched %+v", got)
	}
	for _, n := range got.Notes {
		if strings.ContainsAny(n, "\x1b\x07") {
			t.Errorf("a note holds a control character raw: %q", n)
		}
	}
	if _, err := pgread.Fetch(ctx, conn, t.TempDir(), []string{"outside"}); err == nil || !strings.Contains(err.Error(), "not one of an artifact") {
		t.Errorf("the damaged repository, named: %v", err)
	}
}

// kbq reads with a role granted only what docs/postgres.md lists.
func TestFetchAsReadOnlyRole(t *testing.T) {
	ctx := context.Background()
	url := pgtest.DB(t)
	conn := pgtest.Connect(t, url)
	publish(t, conn, "r", "a", testkb.Files{".kb/a.md": "# A\n\nAlpha.\n"})
	pgtest.Exec(t, url, pgstore.ReadOnlyGrants("kbq_reader")...)
	pgtest.Exec(t, url, `INSERT INTO kbq_grant VALUES ('role:kbq_reader', '*') ON CONFLICT DO NOTHING`)
	reader := pgtest.Connect(t, strings.Replace(url, "kbq@", "kbq_reader@", 1))
	ix, _ := fetched(t, reader, "r")
	resp, err := ix.Search(ctx, query.Request{Query: "alpha"})
	if err != nil || len(resp.Results) != 1 {
		t.Errorf("search: %v %v", resp, err)
	}
}

// SciFact's training queries rank the same, by words, from the database
// as from the artifact.
func TestReadRanksSciFactAsTheArtifact(t *testing.T) {
	if testing.Short() {
		t.Skip("publishes SciFact")
	}
	files, queries, _ := testkb.SciFact(t, filepath.Join("..", "..", "..", "..", "shared", "datasets", "scifact"))
	conn := pgtest.Connect(t, pgtest.DB(t))
	local := publish(t, conn, "scifact", "a", files)
	fromDB, _ := fetched(t, conn, "scifact")
	same := 0
	for _, q := range queries {
		if ranksAlike(t, fromDB, local, query.Request{Query: q, N: 10, Mode: query.ModeLexical, Floor: query.FloorOff}) {
			same++
		}
	}
	if same != len(queries) || same < 800 {
		t.Errorf("%d of %d queries rank the same", same, len(queries))
	}
}

// A URL that does not parse is never echoed with its password, whatever
// part of it the parser quotes.
func TestBadURLsHideTheirPasswords(t *testing.T) {
	for _, u := range []string{
		"postgres://u:hunter2@h:5432x/db", "postgres://u:hunter2@[::1/db", "u:hunter2@h/db", "postgres://u:hun%zzter2@h/db",
		"host=h password=hunter2 port=x", "host=h password='hunter 2' port=x", "postgres://h/db?password=hunter2&port=x",
		"postgres://u:hun:ter2@h:x/db", "postgres://u:hunter2@h/d%zzb", "postgres://u:hunter2@h/db?sslmode=bogus",
		"mysql://u:hunter2@h/db", "postgres:/u:hunter2@h/db", "host=h sslpassword=hunter2 port=x",
	} {
		_, err := pgread.Config(u, func(string) string { return "" })
		if err == nil {
			t.Errorf("%s parsed", u)
			continue
		}
		if msg := err.Error(); strings.Contains(msg, "hunter") || strings.Contains(msg, "ter2") {
			t.Errorf("%s: the message shows the password: %s", u, msg)
		}
	}
}

// The cache keeps what fetches use: a directory of a commit no longer
// published, and the files only it held, go once no fetch has used them
// for pgread.EvictAfter.
func TestCacheIsEvicted(t *testing.T) {
	ctx := context.Background()
	conn := pgtest.Connect(t, pgtest.DB(t))
	cache := t.TempDir()
	for i, body := range []string{"Alpha.", "Beta.", "Gamma."} {
		publish(t, conn, "r", fmt.Sprint(i), testkb.Files{".kb/a.md": "# A\n\n" + body + "\n"})
		if _, err := pgread.Fetch(ctx, conn, cache, nil); err != nil {
			t.Fatal(err)
		}
	}
	count := func(dir string) int {
		entries, _ := os.ReadDir(filepath.Join(cache, dir))
		return len(entries)
	}
	if n := count("repos"); n != 3 {
		t.Fatalf("%d artifact directories before eviction, want the 3 fetched", n)
	}
	before := count("files")
	old := pgread.EvictAfter
	pgread.EvictAfter = -time.Hour
	defer func() { pgread.EvictAfter = old }()
	// Within a minute of the last look, a fetch does not look again.
	if _, err := pgread.Fetch(ctx, conn, cache, nil); err != nil {
		t.Fatal(err)
	}
	if n := count("repos"); n != 3 {
		t.Errorf("%d artifact directories a moment after the last look, want the 3 left as they were", n)
	}
	every := pgread.EvictEvery
	pgread.EvictEvery = 0
	defer func() { pgread.EvictEvery = every }()
	got, err := pgread.Fetch(ctx, conn, cache, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := count("repos"); n != 1 {
		t.Errorf("%d artifact directories after eviction, want 1", n)
	}
	if after := count("files"); runtime.GOOS != "windows" && (after >= before || after == 0) {
		t.Errorf("%d fetched files before eviction, %d after", before, after)
	}
	ix := querytest.OpenDir(t, got.Repos[0].Dir)
	if resp, err := ix.Search(ctx, query.Request{Query: "gamma"}); err != nil || len(resp.Results) != 1 {
		t.Errorf("the artifact kept: %v %v", resp, err)
	}
}
