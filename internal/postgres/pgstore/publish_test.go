package pgstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/kbqdev/kbq/artifact"
	"github.com/kbqdev/kbq/internal/postgres/pgtest"
	"github.com/kbqdev/kbq/internal/reponame"
	"github.com/kbqdev/kbq/internal/testkb"
	"github.com/kbqdev/kbq/query"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// source compiles files as the artifact of commit of repo.
func source(t *testing.T, repo, commit string, files testkb.Files) *Source {
	t.Helper()
	return sourceOf(t, testkb.Build(t, files), repo, commit)
}

// sourceOf opens the artifact in dir as the source of repo at commit.
func sourceOf(t *testing.T, dir, repo, commit string) *Source {
	t.Helper()
	src, closeSource, err := OpenSource(dir, repo)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeSource() })
	src.Commit = commit
	return src
}

// history is a line of commits: a → b → c.
func history(a, b string) (bool, error) {
	order := map[string]int{"a": 1, "b": 2, "c": 3, "x": 10}
	if order[a] == 0 || order[b] == 0 {
		return false, fmt.Errorf("unknown commit")
	}
	if a == "x" || b == "x" {
		return a == b, nil
	}
	return order[a] <= order[b], nil
}

var files = testkb.Files{
	".kb/deploy.md":             "# Deploy\n\nDeploy with make deploy.\n\n## Rollback\n\nRoll back with make rollback.\n",
	".kb/memories/001-retry.md": "---\nid: 1\ncreated: 2024-05-01T10:00:00Z\n---\nRetry the billing API with backoff.\n",
	"services/api/AGENTS.md":    "The API listens on 8080.\n",
}

// publishedDB is a new database holding repo at commit a, published
// from files, and a session of it.
func publishedDB(t *testing.T, repo string, files testkb.Files) (url string, conn *pgx.Conn) {
	t.Helper()
	url = pgtest.DB(t)
	conn = pgtest.Connect(t, url)
	if _, err := Publish(context.Background(), conn, source(t, repo, "a", files), Options{}); err != nil {
		t.Fatal(err)
	}
	return url, conn
}

func count(t *testing.T, conn *pgx.Conn, sql string, args ...any) int {
	t.Helper()
	var n int
	if err := conn.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestPublish(t *testing.T) {
	ctx := context.Background()
	conn := pgtest.Connect(t, pgtest.DB(t))
	opts := Options{IsAncestor: history}

	res, err := Publish(ctx, conn, source(t, "github.com/org/api", "a", files), opts)
	if err != nil {
		t.Fatal(err)
	}
	if res.Previous != "" || res.Added != 3 || res.Chunks != 3 {
		t.Fatalf("first publish: %+v", res)
	}
	if n := count(t, conn, `SELECT count(*) FROM kbq_chunk_search WHERE tsv @@ plainto_tsquery('english', 'rollback')`); n != 1 {
		t.Errorf("a plain SQL search for rollback finds %d chunks", n)
	}
	var body string
	conn.QueryRow(ctx, `SELECT body FROM kbq_document WHERE path = '.kb/deploy.md'`).Scan(&body)
	if body != files[".kb/deploy.md"] {
		t.Errorf("body %q", body)
	}

	// The same commit again writes nothing: no row of the repository or
	// of its file list is rewritten (their row versions stay).
	versions := func() string {
		var v string
		if err := conn.QueryRow(ctx, `SELECT (SELECT xmin::text FROM kbq_repo) || ' ' || (SELECT string_agg(xmin::text || name, ',' ORDER BY name) FROM kbq_repo_file)`).Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	before := versions()
	res, err = Publish(ctx, conn, source(t, "github.com/org/api", "a", files), opts)
	if err != nil || !res.Unchanged() || res.Previous != "a" {
		t.Fatalf("republish: %+v %v", res, err)
	}
	if after := versions(); after != before {
		t.Errorf("a republish of the same commit rewrote rows:\n before %s\n after  %s", before, after)
	}

	// One file changed, one added, one removed.
	changed := testkb.Files{}
	for p, s := range files {
		changed[p] = s
	}
	changed[".kb/deploy.md"] = "# Deploy\n\nDeploy with make ship.\n"
	changed[".kb/new.md"] = "# New\n\nA new note.\n"
	delete(changed, "services/api/AGENTS.md")
	res, err = Publish(ctx, conn, source(t, "github.com/org/api", "b", changed), opts)
	if err != nil {
		t.Fatal(err)
	}
	if res.Changed != 1 || res.Added != 1 || res.Removed != 1 || res.Chunks != 2 || res.Previous != "a" {
		t.Errorf("one-file change: %+v", res)
	}
	if n := count(t, conn, `SELECT count(*) FROM kbq_chunk_search WHERE tsv @@ plainto_tsquery('english', 'rollback')`); n != 0 {
		t.Errorf("the replaced chunk is still there")
	}
	if c := count(t, conn, `SELECT count(*) FROM kbq_document`); c != 3 {
		t.Errorf("%d documents", c)
	}

	// Older and unrelated commits are refused, unless forced.
	if _, err := Publish(ctx, conn, source(t, "github.com/org/api", "a", files), opts); !errors.Is(err, ErrOlder) {
		t.Errorf("older commit: %v", err)
	}
	if _, err := Publish(ctx, conn, source(t, "github.com/org/api", "x", files), opts); !errors.Is(err, ErrDiverged) {
		t.Errorf("unrelated commit: %v", err)
	}
	var commit string
	conn.QueryRow(ctx, `SELECT commit FROM kbq_repo WHERE name = 'github.com/org/api'`).Scan(&commit)
	if commit != "b" {
		t.Errorf("a refused publish changed the commit to %s", commit)
	}
	opts.Force = true
	if res, err := Publish(ctx, conn, source(t, "github.com/org/api", "a", files), opts); err != nil || res.Previous != "b" {
		t.Errorf("forced: %+v %v", res, err)
	}
}

func TestSchemaNewerIsRefused(t *testing.T) {
	url := pgtest.DB(t)
	conn := pgtest.Connect(t, url)
	if err := Migrate(context.Background(), conn); err != nil {
		t.Fatal(err)
	}
	pgtest.Exec(t, url, `UPDATE kbq_schema SET version = 99`)
	_, err := Publish(context.Background(), conn, source(t, "r", "a", files), Options{})
	if !errors.Is(err, ErrSchemaNewer) || !strings.Contains(err.Error(), "upgrade kbc") {
		t.Errorf("newer schema: %v", err)
	}
}

// Publishes of one repository take turns, whatever the order they end
// in; of different repositories they all land.
func TestConcurrentPublishes(t *testing.T) {
	url := pgtest.DB(t)
	if err := Migrate(context.Background(), pgtest.Connect(t, url)); err != nil {
		t.Fatal(err)
	}
	srcs := []*Source{
		source(t, "one", "a", files), source(t, "one", "a", files), source(t, "one", "a", files),
		source(t, "two", "a", files), source(t, "three", "a", files),
	}
	var wg sync.WaitGroup
	errs := make([]error, len(srcs))
	for i, src := range srcs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn, err := pgx.Connect(context.Background(), url)
			if err != nil {
				errs[i] = err
				return
			}
			defer conn.Close(context.Background())
			_, errs[i] = Publish(context.Background(), conn, src, Options{IsAncestor: history})
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("publish %d: %v", i, err)
		}
	}
	conn := pgtest.Connect(t, url)
	if n := count(t, conn, `SELECT count(*) FROM kbq_document`); n != 9 {
		t.Errorf("%d documents, want 3 for each of 3 repositories", n)
	}
	if n := count(t, conn, `SELECT count(*) FROM kbq_chunk`); n != 9 {
		t.Errorf("%d chunks, want 3 for each of 3 repositories", n)
	}
}

// A role granted only what docs/postgres.md says a reader needs, and the
// repository, can read and cannot publish.
func TestReadOnlyRole(t *testing.T) {
	url, owner := publishedDB(t, "r", files)
	pgtest.Exec(t, url, ReadOnlyGrants("kbq_reader")...)
	if _, err := AddGrant(context.Background(), owner, Grant{Principal: "role:kbq_reader", Pattern: "r"}); err != nil {
		t.Fatal(err)
	}
	reader := strings.Replace(url, "kbq@", "kbq_reader@", 1)
	rc := pgtest.Connect(t, reader)
	if n := count(t, rc, `SELECT count(*) FROM kbq_chunk`); n != 3 {
		t.Errorf("the reader sees %d chunks", n)
	}
	_, err := Publish(context.Background(), rc, source(t, "r", "b", files), Options{Force: true})
	if err == nil || !strings.Contains(err.Error(), "permission denied") {
		t.Errorf("a reader published: %v", err)
	}
}

// A publish whose client dies half way (its connection cut, as when the
// process is killed) leaves the previous knowledge whole.
func TestKilledPublishLeavesThePrevious(t *testing.T) {
	ctx := context.Background()
	url := pgtest.DB(t)
	if _, err := Publish(ctx, pgtest.Connect(t, url), source(t, "r", "a", files), Options{}); err != nil {
		t.Fatal(err)
	}
	many := testkb.Files{}
	for i := range 200 {
		many[fmt.Sprintf(".kb/notes/n%03d.md", i)] = fmt.Sprintf("# Note %d\n\nText of note %d.\n", i, i)
	}
	src := source(t, "r", "b", many)
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	chunks, calls := src.Chunks, 0
	src.Chunks = func(ctx context.Context, d artifact.Document) ([]query.Chunk, error) {
		if calls++; calls == 150 {
			conn.PgConn().Conn().Close() // the process dies
		}
		return chunks(ctx, d)
	}
	if _, err := Publish(ctx, conn, src, Options{IsAncestor: history}); err == nil {
		t.Fatal("a publish that lost its connection succeeded")
	}
	check := pgtest.Connect(t, url)
	var commit string
	check.QueryRow(ctx, `SELECT commit FROM kbq_repo WHERE name = 'r'`).Scan(&commit)
	if n := count(t, check, `SELECT count(*) FROM kbq_document`); commit != "a" || n != 3 {
		t.Errorf("after the publish died: commit %s, %d documents; want a and 3", commit, n)
	}
}

func TestCheckRepoName(t *testing.T) {
	for name, ok := range map[string]bool{
		"github.com/org/api": true, "api": true, "gitlab.example/team/sub/repo": true, "ünïcode/repo": true,
		"": false, "a b": false, "a\nb": false, "a\tb": false, "host:org/repo": false, "a\x00b": false,
		"\xff": false, strings.Repeat("a", reponame.Max): true, strings.Repeat("a", reponame.Max+1): false,
		"api\u200b": false, "\u202eipa": false, "a\x1bb": false, "a\ab": false, "a=b": false,
	} {
		if err := CheckRepoName(name); (err == nil) != ok {
			t.Errorf("%q: %v, want ok %v", name, err, ok)
		}
	}
	if _, err := Publish(context.Background(), nil, &Source{Repo: "a b"}, Options{}); err == nil || !strings.Contains(err.Error(), "holds a space") {
		t.Errorf("Publish of %q: %v", "a b", err)
	}
}
