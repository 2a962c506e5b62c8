package kbqserve

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kbqdev/kbq/internal/answer"
	"github.com/kbqdev/kbq/internal/cli"
	"github.com/kbqdev/kbq/internal/mcptest"
	"github.com/kbqdev/kbq/internal/pgstore"
	"github.com/kbqdev/kbq/internal/pgtest"
	"github.com/kbqdev/kbq/internal/testkb"
)

func publishFiles(t *testing.T, url, repo, commit string, files testkb.Files) {
	t.Helper()
	src, closeSource, err := pgstore.OpenSource(testkb.Build(t, files), repo)
	if err != nil {
		t.Fatal(err)
	}
	defer closeSource()
	src.Commit = commit
	if _, err := pgstore.Publish(context.Background(), pgtest.Connect(t, url), src, pgstore.Options{Force: true}); err != nil {
		t.Fatal(err)
	}
}

// followingTools are the servers' tools over the database at url, with a
// cache of their own, looking for new publishes every 50 ms.
func followingTools(t *testing.T, url string) (*tools, *cli.Streams) {
	t.Helper()
	old := dbRefresh
	dbRefresh = 50 * time.Millisecond
	t.Cleanup(func() { dbRefresh = old })
	env := map[string]string{"XDG_CACHE_HOME": t.TempDir()}
	s := &cli.Streams{Getenv: func(k string) string { return env[k] }, Err: &strings.Builder{}}
	return serverToolsOf(s, &answer.Sources{DB: url}), s
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
	if _, _, err := tl.acquire(); err == nil || !strings.Contains(err.Error(), "does not exist") {
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
