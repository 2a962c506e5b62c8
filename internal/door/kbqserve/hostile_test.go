package kbqserve

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/kbqdev/kbq/compiler"
	"github.com/kbqdev/kbq/internal/cli"
	"github.com/kbqdev/kbq/internal/door/online"
	"github.com/kbqdev/kbq/internal/mcptest"
	"github.com/kbqdev/kbq/internal/querytest"
	"github.com/kbqdev/kbq/internal/testkb"
	"github.com/kbqdev/kbq/internal/usage"
	"github.com/kbqdev/kbq/query"
)

// What an <img> or a fetch on any web page sends: Sec-Fetch-Site
// cross-site, and no Origin. It is refused on every endpoint, and not
// counted as use, unless its Origin is explicitly allowed.
func TestCrossSiteRequestsAreRefused(t *testing.T) {
	dir, tl, streams := recordingTools(t)
	h := newHandler(tl, &serveOptions{allowOrigins: []string{"http://app.example"}}, false)
	for _, target := range []string{"/search?q=rollback", "/get?topic=memories/001-retry", "/list", "/context", "/stats", "/healthz", "/mcp"} {
		status, body := get(t, h, target, map[string]string{"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Dest": "image"})
		if status != http.StatusForbidden || !strings.Contains(body, "cross-site") {
			t.Errorf("GET %s cross-site: %d %s, want 403", target, status, body)
		}
	}
	if status, body := get(t, h, "/search?q=rollback", map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "http://app.example"}); status != 200 {
		t.Errorf("cross-site from an allowed origin: %d %s", status, body)
	}
	for _, site := range []string{"same-origin", "none"} {
		if status, body := get(t, h, "/search?q=rollback", map[string]string{"Sec-Fetch-Site": site}); status != 200 {
			t.Errorf("Sec-Fetch-Site %s: %d %s", site, status, body)
		}
	}
	sum, _, err := usage.ReadFile(dir, streams.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	if u := sum.Docs[".kb/memories/001-retry.md"]; u != nil {
		t.Errorf("a refused cross-site get was counted as use: %+v", u)
	}
}

// A request that panics is a 500, and the server goes on serving.
func TestPanicIsA500(t *testing.T) {
	h := guard(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/boom" {
			panic("boom")
		}
		w.Write([]byte("ok"))
	}), nil, false)
	if status, body := get(t, h, "/boom", nil); status != 500 || !strings.Contains(body, "internal error") {
		t.Errorf("a panicking request: %d %s", status, body)
	}
	if status, _ := get(t, h, "/fine", nil); status != 200 {
		t.Errorf("after a panic: %d", status)
	}
}

// Every byte of every file of a served artifact, flipped one at a time
// (every third under -short): the server answers every endpoint with a
// status, and panics nowhere, the MCP tools included.
func TestServingDamagedArtifacts(t *testing.T) {
	dir := testkb.Build(t, files)
	stride := 1
	if testing.Short() {
		stride = 3
	}
	targets := []string{"/search?q=deploy+rollback", "/search?q=deploy*&all_scopes=true&chunks=true", "/get?topic=deploy", "/get?ref=memory:1",
		"/list", "/context?dir=services/api", "/stats", "/healthz"}
	failed := 0
	flips := querytest.FlipEachByte(t, dir, stride, func(rel string, off int) {
		live, err := query.OpenLive(dir, query.DefaultRanking())
		if err != nil {
			return // refused at open: no request reads it
		}
		defer live.Close()
		h := newHandler(&served{live: live}, &serveOptions{}, false)
		for _, target := range targets {
			if status, body := get(t, h, target, nil); status == 0 || status == 500 && strings.Contains(body, "internal error") {
				failed++
				if failed < 5 {
					t.Errorf("%s byte %#x flipped: GET %s: %d %s", rel, off, target, status, body)
				}
			}
		}
	})
	t.Logf("%d flips, %d requests each, %d failed", flips, len(targets), failed)
}

// mcpPost posts body to /mcp of srv, in session id when set, and returns
// the status, the session the answer names and the body.
func mcpPost(t *testing.T, url, id, body string) (int, string, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", url+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if id != "" {
		req.Header.Set("Mcp-Session-Id", id)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Mcp-Session-Id"), string(b)
}

func initialize(version string) string {
	return `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + version + `","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
}

// Sessions are capped, the least recently used closed first; a batch is
// refused where the negotiated protocol has none, even without the
// MCP-Protocol-Version header, and bounded where it has.
func TestMCPSessionsAndBatchesAreBounded(t *testing.T) {
	h := newHandler(newTools(t, testkb.Build(t, files)), &serveOptions{}, false)
	srv := httptest.NewServer(h)
	defer srv.Close()
	var ids []string
	for range maxSessions + 50 {
		status, id, body := mcpPost(t, srv.URL, "", initialize("2025-06-18"))
		if status != 200 || id == "" {
			t.Fatalf("initialize: %d %s", status, body)
		}
		ids = append(ids, id)
	}
	list := `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
	if status, _, body := mcpPost(t, srv.URL, ids[0], list); status != http.StatusNotFound {
		t.Errorf("the oldest session, evicted: %d %s", status, body)
	}
	if status, _, body := mcpPost(t, srv.URL, ids[len(ids)-1], list); status != 200 || !strings.Contains(body, "knowledge_search") {
		t.Errorf("the newest session: %d %s", status, body)
	}

	batch := func(n int) string {
		calls := make([]string, n)
		for i := range calls {
			calls[i] = `{"jsonrpc":"2.0","id":` + strings.Repeat("1", 1+i%5) + `,"method":"tools/list"}`
		}
		return "[" + strings.Join(calls, ",") + "]"
	}
	if status, _, body := mcpPost(t, srv.URL, ids[len(ids)-1], batch(2)); status != 400 || !strings.Contains(body, "batches are not part of MCP 2025-06-18") {
		t.Errorf("a batch in a 2025-06-18 session: %d %s", status, body)
	}
	_, old, _ := mcpPost(t, srv.URL, "", initialize("2025-03-26"))
	if status, _, body := mcpPost(t, srv.URL, old, batch(2)); status != 200 || !strings.Contains(body, "knowledge_search") {
		t.Errorf("a batch of 2 in a 2025-03-26 session: %d %s", status, body)
	}
	if status, _, body := mcpPost(t, srv.URL, old, batch(maxBatchCalls+1)); status != 400 || !strings.Contains(body, "at most 32") {
		t.Errorf("a batch of %d: %d %s", maxBatchCalls+1, status, body)
	}
}

// When the query cannot be embedded, the answer says so in its notes, in
// HTTP and MCP alike, and a failing endpoint is not asked again for a
// while: the next search is lexical at once.
func TestSkippedChannelIsNotedAndTheEndpointRests(t *testing.T) {
	var asked atomic.Int32
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		http.Error(w, `{"error":{"message":"overloaded"}}`, http.StatusServiceUnavailable)
	}))
	defer down.Close()
	dir := t.TempDir()
	opts := compiler.BuildOptions{Out: dir, BuiltAt: testkb.BuiltAt, Options: compiler.Options{Embedder: querytest.Letters{URL: down.URL + "/v1"}}}
	if _, err := compiler.Build(context.Background(), files, opts); err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	streams := &cli.Streams{Err: io.Discard, Getenv: func(k string) string { return map[string]string{"XDG_CACHE_HOME": cache}[k] }}
	tl := newTools(t, dir)
	tl.embedder = online.QueryEmbedder(streams)
	h := newHandler(tl, &serveOptions{}, false)

	status, body := get(t, h, "/search?q=roll+back+a+deploy", nil)
	if status != 200 || !strings.Contains(body, `"notes":["searched by words only: embeddings endpoint `) || !strings.Contains(body, "503 Service Unavailable") {
		t.Fatalf("search with the endpoint down: %d %s", status, body)
	}
	first := asked.Load()
	if first == 0 {
		t.Fatal("the endpoint was never asked")
	}
	status, body = get(t, h, "/search?q=roll+back+a+deploy", nil)
	if status != 200 || !strings.Contains(body, "kbq asks it again in") || asked.Load() != first {
		t.Errorf("the second search: %d %s; the endpoint was asked %d times, then %d", status, body, first, asked.Load())
	}
	res, out := mcptest.Call(t, connect(t, tl), "knowledge_search", map[string]any{"query": "roll back a deploy"})
	notes, _ := out["notes"].([]any)
	if res.IsError || len(notes) == 0 || !strings.Contains(fmt.Sprint(notes), "searched by words only") {
		t.Errorf("MCP search with the endpoint down: notes %v, %s", notes, mcptest.Text(res))
	}
}
