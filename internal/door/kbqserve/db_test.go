package kbqserve

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kbqdev/kbq/compiler"
	"github.com/kbqdev/kbq/internal/cli"
	"github.com/kbqdev/kbq/internal/door/online"
	"github.com/kbqdev/kbq/internal/door/reader"
	"github.com/kbqdev/kbq/internal/mcptest"
	"github.com/kbqdev/kbq/internal/postgres/pgread"
	"github.com/kbqdev/kbq/internal/postgres/pgstore"
	"github.com/kbqdev/kbq/internal/postgres/pgstoretest"
	"github.com/kbqdev/kbq/internal/postgres/pgtest"
	"github.com/kbqdev/kbq/internal/querytest"
	"github.com/kbqdev/kbq/internal/testkb"
)

func publishFiles(t *testing.T, url, repo, commit string, files testkb.Files) {
	t.Helper()
	pgstoretest.Publish(t, url, repo, commit, files)
}

// followingTools are the servers' tools over the database at url, with a
// cache of their own, looking for new publishes every 50 ms.
func followingTools(t *testing.T, url string) (*served, *cli.Streams) {
	t.Helper()
	old := dbRefresh
	dbRefresh = 50 * time.Millisecond
	t.Cleanup(func() { dbRefresh = old })
	env := map[string]string{"XDG_CACHE_HOME": t.TempDir()}
	s := &cli.Streams{Getenv: func(k string) string { return env[k] }, Err: &strings.Builder{}}
	return serverToolsOf(s, &reader.Sources{DB: url}), s
}

// kbq serve --db and kbq mcp --db follow the database: a new publish, and
// a repository published after they started, are served without a
// restart.
func TestServersFollowTheDatabase(t *testing.T) {
	url := pgtest.DB(t)
	publishFiles(t, url, "api", "a", testkb.Files{".kb/keys.md": "# Keys\n\nRotate the signing key yearly.\n"})
	tl, s := followingTools(t, url)
	if tl.unavailable != nil {
		t.Fatal(tl.unavailable)
	}
	ctx, cancel := context.WithCancel(context.Background())
	tl.watch(ctx, s, "test")
	defer tl.close()
	defer cancel()
	cs := connect(t, tl)
	search := func(q string) string {
		res, _ := mcptest.Call(t, cs, "knowledge_search", map[string]any{"query": q})
		return mcptest.Text(res)
	}
	if got := search("rotate"); !strings.Contains(got, "yearly") {
		t.Fatalf("first search: %s", got)
	}
	publishFiles(t, url, "api", "b", testkb.Files{".kb/keys.md": "# Keys\n\nRotate the signing key monthly.\n"})
	publishFiles(t, url, "web", "a", testkb.Files{".kb/web.md": "# Web\n\nRotate the session cookie secret.\n"})
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := search("rotate")
		if strings.Contains(got, "monthly") && strings.Contains(got, "`web:.kb/web.md") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server did not follow the publishes:\n%s", got)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// A server started before its database can be read serves once it can,
// without a restart, and says why meanwhile.
func TestServersWaitForTheDatabase(t *testing.T) {
	url := pgtest.DB(t)
	later := strings.Replace(url, "/kbq_test_", "/kbq_later_", 1)
	tl, s := followingTools(t, later)
	if tl.unavailable != nil {
		t.Fatalf("a database not there yet is not worth giving up on: %v", tl.unavailable)
	}
	if _, _, err := tl.acquire(nil); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("before the database exists: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	tl.watch(ctx, s, "test")
	defer tl.close()
	defer cancel()
	name := later[strings.LastIndex(later, "/")+1 : strings.Index(later, "?")]
	pgtest.Exec(t, url, "CREATE DATABASE "+name)
	publishFiles(t, later, "api", "a", testkb.Files{".kb/keys.md": "# Keys\n\nRotate the signing key yearly.\n"})
	cs := connect(t, tl)
	deadline := time.Now().Add(10 * time.Second)
	for {
		res, _ := mcptest.Call(t, cs, "knowledge_search", map[string]any{"query": "rotate"})
		if got := mcptest.Text(res); strings.Contains(got, "yearly") {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("the server did not take up the database once there:\n%s", got)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// A writer stores a damaged file with its correct hash: every byte of
// the vectors file flipped, one at a time, and every 29th byte of the
// others, each served by a kbq serve --db that refreshes onto it. The
// server answers every request with a status, and panics nowhere.
func TestServingDamagedFilesFromTheDatabase(t *testing.T) {
	endpoint := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct{ Input []string }
		json.NewDecoder(r.Body).Decode(&req)
		type item struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		var resp struct {
			Data []item `json:"data"`
		}
		for i, text := range req.Input {
			resp.Data = append(resp.Data, item{i, querytest.LetterVector(text)})
		}
		json.NewEncoder(w).Encode(resp)
	}))
	defer endpoint.Close()
	url := pgtest.DB(t)
	dir := t.TempDir()
	opts := compiler.BuildOptions{Out: dir, BuiltAt: testkb.BuiltAt, Options: compiler.Options{Embedder: querytest.Letters{URL: endpoint.URL + "/v1"}}}
	if _, err := compiler.Build(context.Background(), files, opts); err != nil {
		t.Fatal(err)
	}
	src, closeSource, err := pgstore.OpenSource(dir, "acme")
	if err != nil {
		t.Fatal(err)
	}
	defer closeSource()
	conn := pgtest.Connect(t, url)
	ctx := context.Background()
	if _, err := pgstore.Publish(ctx, conn, src, pgstore.Options{Force: true}); err != nil {
		t.Fatal(err)
	}
	tl, _ := followingTools(t, url)
	tl.embedder = online.QueryEmbedder(&cli.Streams{Err: io.Discard, Getenv: func(k string) string {
		return map[string]string{"XDG_CACHE_HOME": t.TempDir()}[k]
	}})
	h := newHandler(tl, &serveOptions{}, false)
	if _, body := get(t, h, "/search?q=roll+back+a+deploy", nil); !strings.Contains(body, `"semantic"`) {
		t.Fatalf("the undamaged artifact is not searched by meaning: %s", body)
	}
	rows, err := conn.Query(ctx, `SELECT r.name, f.data FROM kbq_repo_file r JOIN kbq_file f ON f.hash = r.hash`)
	if err != nil {
		t.Fatal(err)
	}
	stored := map[string][]byte{}
	for rows.Next() {
		var name string
		var data []byte
		if err := rows.Scan(&name, &data); err != nil {
			t.Fatal(err)
		}
		stored[name] = data
	}
	if rows.Err() != nil || len(stored) < 4 {
		t.Fatalf("stored files %d: %v", len(stored), rows.Err())
	}
	targets := []string{"/search?q=roll+back+a+deploy", "/search?q=deploy*&mode=semantic&all_scopes=true&chunks=true", "/get?topic=deploy", "/list", "/context", "/stats", "/healthz"}
	store := func(name string, data []byte) {
		sum := sha256.Sum256(data)
		hash := hex.EncodeToString(sum[:])
		if _, err := conn.Exec(ctx, `INSERT INTO kbq_file (hash, size, data) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`, hash, len(data), data); err != nil {
			t.Fatal(err)
		}
		if _, err := conn.Exec(ctx, `UPDATE kbq_repo_file SET hash = $1 WHERE name = $2`, hash, name); err != nil {
			t.Fatal(err)
		}
	}
	flips, statuses := 0, map[int]int{}
	for name, orig := range stored {
		stride := 29
		if strings.HasSuffix(name, "/vectors") {
			stride = 1
		}
		if testing.Short() {
			stride *= 7
		}
		for off := 0; off < len(orig); off += stride {
			damaged := append([]byte(nil), orig...)
			damaged[off] ^= 0xff
			store(name, damaged)
			flips++
			tl.refresh()
			for _, target := range targets {
				status, body := get(t, h, target, nil)
				statuses[status]++
				if status == 0 || status == 500 && strings.Contains(body, "internal error") {
					t.Errorf("%s byte %#x flipped: GET %s: %d %s", name, off, target, status, body)
				}
			}
		}
		store(name, orig)
	}
	t.Logf("%d files stored, %d flips, %d requests each: statuses %v", len(stored), flips, len(targets), statuses)
}

// A server reads a large artifact of the database in part, its first
// search fetching what it reads; once it has answered, the server fetches
// the rest in the background and, at its next refresh, serves the files
// whole from the cache.
func TestServerFetchesInPartThenWhole(t *testing.T) {
	oldMin, oldAfter := pgread.PartlyMin, completeAfter
	pgread.PartlyMin, completeAfter = 0, time.Hour // only an answer starts it
	t.Cleanup(func() { pgread.PartlyMin, completeAfter = oldMin, oldAfter })
	url := pgtest.DB(t)
	files := testkb.Files{}
	for i := range 300 {
		files[fmt.Sprintf(".kb/notes/n%03d.md", i)] = fmt.Sprintf("# Note %d\n\n%s\n", i, strings.Repeat(fmt.Sprintf("Rotate key %d of the signing service every %d days. ", i, 30+i), 8))
	}
	publishFiles(t, url, "api", "a", files)
	tl, s := followingTools(t, url)
	if tl.unavailable != nil {
		t.Fatal(tl.unavailable)
	}
	dir := func() string {
		tl.mu.RLock()
		defer tl.mu.RUnlock()
		return tl.many[0].live.Dir()
	}
	if !strings.Contains(filepath.Base(dir()), "placing-") {
		t.Fatalf("served from %s, not from files held in part", dir())
	}
	ctx, cancel := context.WithCancel(context.Background())
	tl.watch(ctx, s, "test")
	defer tl.close()
	defer cancel()
	cs := connect(t, tl)
	search := func() string {
		res, _ := mcptest.Call(t, cs, "knowledge_search", map[string]any{"query": "key 123 signing"})
		return mcptest.Text(res)
	}
	if got := search(); !strings.Contains(got, "Rotate key 123 of the signing service every 153 days") {
		t.Fatalf("read in part: %s", got)
	}
	deadline := time.Now().Add(10 * time.Second)
	for filepath.Base(filepath.Dir(dir())) != "repos" {
		if time.Now().After(deadline) {
			t.Fatalf("still served from %s", dir())
		}
		time.Sleep(20 * time.Millisecond)
	}
	partials, _ := filepath.Glob(filepath.Join(s.Getenv("XDG_CACHE_HOME"), "kbq", "db", "files", "partial-*"))
	if len(partials) > 0 {
		t.Errorf("partial files left in the cache: %v", partials)
	}
	if got := search(); !strings.Contains(got, "Rotate key 123 of the signing service every 153 days") {
		t.Fatalf("read whole: %s", got)
	}
}
