package kbqserve

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kbqdev/kbq/internal/cli"
	"github.com/kbqdev/kbq/internal/mcptest"
	"github.com/kbqdev/kbq/internal/postgres/pgtest"
	"github.com/kbqdev/kbq/internal/testkb"
	"github.com/kbqdev/kbq/internal/usage"
	"github.com/kbqdev/kbq/query"
)

var files = testkb.Files{
	".kb/context.md":             "---\nversion: 1\nupdated: 2024-05-01\n---\nUse the message bus.\n",
	".kb/deploy.md":              "---\ntitle: Deploying\ntags: [ops]\n---\n# Deploying\n\nDeploy with make deploy; roll back with make rollback.\n",
	".kb/memories/001-retry.md":  "---\nid: 1\ncreated: 2024-05-01T10:00:00Z\n---\nRetry the billing API with backoff.\n",
	"services/api/.kb/deploy.md": "# Deploying the API\n\nThe API deploys with helm.\n",
	"services/api/AGENTS.md":     "The API listens on 8080.\n",
}

func TestMain(m *testing.M) { pgtest.Main(m) }

func newTools(t *testing.T, dir string) *served {
	t.Helper()
	live, err := query.OpenLive(dir, query.DefaultRanking())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { live.Close() })
	return &served{live: live}
}

func connect(t *testing.T, tl *served) *mcp.ClientSession {
	t.Helper()
	return mcptest.Connect(t, newMCPServer(tl))
}

func TestMCPTools(t *testing.T) {
	cs := connect(t, newTools(t, testkb.Build(t, files)))
	list, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
		if tool.Description == "" || tool.InputSchema == nil || !tool.Annotations.ReadOnlyHint {
			t.Errorf("%s: description, input schema and read-only hint are required", tool.Name)
		}
	}
	slices.Sort(names)
	if strings.Join(names, " ") != "knowledge_context knowledge_get knowledge_list knowledge_search" {
		t.Fatalf("tools %v", names)
	}

	res, out := mcptest.Call(t, cs, "knowledge_search", map[string]any{"query": "how do we roll back a deploy?"})
	results, _ := out["results"].([]any)
	if res.IsError || len(results) == 0 {
		t.Fatalf("search: %v %s", out, mcptest.Text(res))
	}
	first := results[0].(map[string]any)
	var keys []string
	for k := range first {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if strings.Join(keys, " ") != "channels content heading kind lines path scope score snippet tags topic" {
		t.Errorf("result fields %v, want those of kbq search --json", keys)
	}
	if first["path"] != ".kb/deploy.md" || !strings.Contains(mcptest.Text(res), "## 1. Deploying") {
		t.Errorf("search: %v\n%s", first["path"], mcptest.Text(res))
	}

	res, out = mcptest.Call(t, cs, "knowledge_search", map[string]any{"query": "deploy", "dir": "services/api"})
	if got := out["results"].([]any)[0].(map[string]any)["path"]; res.IsError || got != "services/api/.kb/deploy.md" {
		t.Errorf("search from services/api found %v first", got)
	}

	// scope, all_scopes and chunks, as kbq search takes them.
	res, out = mcptest.Call(t, cs, "knowledge_search", map[string]any{"query": "helm", "scope": "services/api"})
	if got, _ := out["results"].([]any); res.IsError || len(got) != 1 || got[0].(map[string]any)["path"] != "services/api/.kb/deploy.md" {
		t.Errorf("search with scope from the root: %v %s", out, mcptest.Text(res))
	}
	res, out = mcptest.Call(t, cs, "knowledge_search", map[string]any{"query": "deploying", "all_scopes": true, "chunks": true, "kind": "topic", "n": 10})
	if got, _ := out["results"].([]any); res.IsError || len(got) != 2 {
		t.Errorf("search with all_scopes: %v %s", out, mcptest.Text(res))
	}
	res, _ = mcptest.Call(t, cs, "knowledge_search", map[string]any{"query": "helm", "scope": "nosuch"})
	if !res.IsError || !strings.Contains(mcptest.Text(res), `"nosuch" is not a scope of this artifact; its scopes are project, services/api`) {
		t.Errorf("unknown scope: %s", mcptest.Text(res))
	}

	res, out = mcptest.Call(t, cs, "knowledge_get", map[string]any{"ref": "memory:1"})
	if res.IsError || !strings.Contains(mcptest.Text(res), "Retry the billing API") || out["kind"] != "memory" {
		t.Errorf("get: %v %s", out, mcptest.Text(res))
	}
	res, out = mcptest.Call(t, cs, "knowledge_list", map[string]any{"kind": "memory"})
	if docs, _ := out["documents"].([]any); res.IsError || len(docs) != 1 {
		t.Errorf("list: %v", out)
	}
	res, out = mcptest.Call(t, cs, "knowledge_context", map[string]any{"dir": "services/api"})
	if !strings.Contains(mcptest.Text(res), "### Directory Context: services/api") || !strings.Contains(out["text"].(string), "Use the message bus") {
		t.Errorf("context: %s", mcptest.Text(res))
	}
}

func TestMCPBadArguments(t *testing.T) {
	cs := connect(t, newTools(t, testkb.Build(t, files)))
	for _, tc := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"knowledge_search", map[string]any{}, "query"},
		{"knowledge_search", map[string]any{"query": "   "}, "query is empty"},
		{"knowledge_search", map[string]any{"query": "x", "n": 500}, "n must be between"},
		{"knowledge_search", map[string]any{"query": "x", "n": "five"}, "n"},
		{"knowledge_search", map[string]any{"query": "x", "kind": "pets"}, "kind must be one of"},
		{"knowledge_search", map[string]any{"query": strings.Repeat("x", 5000)}, "over 4096"},
		{"knowledge_search", map[string]any{"query": "x", "dir": "../../etc"}, "leaves the repository"},
		{"knowledge_search", map[string]any{"query": "x", "recency": "soon"}, "want a half-life"},
		{"knowledge_get", map[string]any{"ref": "nothing"}, "no document"},
		{"knowledge_get", map[string]any{}, "ref"},
		{"knowledge_list", map[string]any{"kind": "pets"}, "kind must be one of"},
	} {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tc.tool, Arguments: tc.args})
		if err != nil {
			t.Errorf("%s %v: protocol error %v, want a tool error", tc.tool, tc.args, err)
			continue
		}
		if !res.IsError || !strings.Contains(mcptest.Text(res), tc.want) {
			t.Errorf("%s %v: error=%v %q, want a tool error mentioning %q", tc.tool, tc.args, res.IsError, mcptest.Text(res), tc.want)
		}
	}
	// The session still works.
	if res, _ := mcptest.Call(t, cs, "knowledge_search", map[string]any{"query": "deploy"}); res.IsError {
		t.Error("session broken after bad calls")
	}
}

func get(t *testing.T, h http.Handler, target string, header map[string]string) (int, string) {
	t.Helper()
	req := httptest.NewRequest("GET", target, nil)
	req.Host = "127.0.0.1:7419"
	for k, v := range header {
		if k == "Host" {
			req.Host = v
		} else {
			req.Header.Set(k, v)
		}
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code, rec.Body.String()
}

func TestHTTPAPI(t *testing.T) {
	h := newHandler(newTools(t, testkb.Build(t, files)), &serveOptions{allowOrigins: []string{"http://app.example"}}, false)
	for _, tc := range []struct {
		target string
		header map[string]string
		status int
		want   string
	}{
		{"/search?q=rollback&n=1", nil, 200, `"path":".kb/deploy.md"`},
		{"/search?q=deploy&dir=services/api&n=1", nil, 200, `"path":"services/api/.kb/deploy.md"`},
		{"/search?q=deploy&kind=memory", nil, 200, `"results":[]`},
		{"/search?q=helm&scope=services/api", nil, 200, `"path":"services/api/.kb/deploy.md"`},
		{"/search?q=helm&all_scopes=true&chunks=true", nil, 200, `"path":"services/api/.kb/deploy.md"`},
		{"/search?q=helm&scope=nosuch", nil, 400, "its scopes are project, services/api"},
		{"/search?q=", nil, 400, "query is empty"},
		{"/search?q=x&n=abc", nil, 400, "is not a number"},
		{"/search?q=x&n=0", nil, 400, "n must be between 1 and 50"},
		{"/search?q=x&n=51", nil, 400, "n must be between 1 and 50"},
		{"/search?q=x&chunks=maybe", nil, 400, `chunks=\"maybe\" is not true or false`},
		{"/search?q=x&all_scopes=2", nil, 400, "is not true or false"},
		{"/search?q=rollback&n=1&recency=90d", nil, 200, `"path":".kb/deploy.md"`},
		{"/search?q=x&recency=90", nil, 400, "want a half-life"},
		{"/context?wrap=yes", nil, 400, "is not true or false"},
		{"/search?q=" + strings.Repeat("x", 5000), nil, 400, "over 4096"},
		{"/get?topic=deploy", nil, 200, `"title":"Deploying"`},
		{"/get?path=services/api/AGENTS.md", nil, 200, "8080"},
		{"/get?topic=nope", nil, 404, "no document"},
		{"/list?kind=memory", nil, 200, `"topic":"memories/001-retry"`},
		{"/context?dir=services/api", nil, 200, "Directory Context: services/api"},
		{"/context?wrap=true", nil, 200, "<system-reminder>"},
		{"/stats", nil, 200, `"documents":5`},
		{"/healthz", nil, 200, `"status":"ok"`},
		{"/healthz", map[string]string{"Host": "localhost:7419"}, 200, "ok"},
		{"/healthz", map[string]string{"Host": "[::1]:7419"}, 200, "ok"},
		{"/stats", map[string]string{"Host": "LOCALHOST:7419"}, 200, "documents"},
		{"/healthz", map[string]string{"Host": "attacker.example"}, 403, "is not this machine"},
		{"/search?q=x", map[string]string{"Origin": "https://attacker.example"}, 403, "Origin"},
		{"/search?q=deploy", map[string]string{"Origin": "http://localhost:3000"}, 200, "results"},
		{"/search?q=deploy", map[string]string{"Origin": "http://app.example"}, 200, "results"},
		{"/nothing", nil, 404, `{"error":"not found: no endpoint /nothing`},
	} {
		status, body := get(t, h, tc.target, tc.header)
		if status != tc.status || !strings.Contains(body, tc.want) {
			t.Errorf("GET %s %v: %d %s, want %d with %q", tc.target[:min(len(tc.target), 60)], tc.header, status, body[:min(len(body), 200)], tc.status, tc.want)
		}
	}
}

// /mcp and the API admit the same Host headers: one check for both.
func TestHTTPHostOneCheck(t *testing.T) {
	srv := httptest.NewServer(newHandler(newTools(t, testkb.Build(t, files)), &serveOptions{}, false))
	defer srv.Close()
	do := func(method, path, host, body string) int {
		req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		req.Host = host
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	for host, want := range map[string]int{"LOCALHOST:7419": 200, "localhost:7419": 200, "127.0.0.1:7419": 200, "attacker.example": 403} {
		mcpStatus, stats := do("POST", "/mcp", host, init), do("GET", "/stats", host, "")
		if mcpStatus != want || stats != want {
			t.Errorf("Host %s: /mcp %d, /stats %d, want %d for both", host, mcpStatus, stats, want)
		}
	}
}

// Every error of the API is JSON, even for a path or method it does not have.
func TestHTTPMethodNotAllowed(t *testing.T) {
	h := newHandler(newTools(t, testkb.Build(t, files)), &serveOptions{}, false)
	req := httptest.NewRequest("POST", "/search?q=deploy", nil)
	req.Host = "127.0.0.1:7419"
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusMethodNotAllowed || rec.Header().Get("Allow") != "GET, HEAD" ||
		!strings.Contains(rec.Body.String(), `{"error":"method POST not allowed: /search answers GET"}`) {
		t.Errorf("POST /search: %d Allow=%q %s", rec.Code, rec.Header().Get("Allow"), rec.Body)
	}
}

func TestHTTPRejectsHugeBodies(t *testing.T) {
	srv := httptest.NewServer(newHandler(newTools(t, testkb.Build(t, files)), &serveOptions{}, false))
	defer srv.Close()
	body := strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"` + strings.Repeat("x", 10<<20) + `"}}`)
	req, _ := http.NewRequest("POST", srv.URL+"/mcp", body)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("a 10 MB request got %d, want 413", resp.StatusCode)
	}
	// The server is still up.
	resp, err = http.Get(srv.URL + "/healthz")
	if err != nil || resp.StatusCode != 200 {
		t.Errorf("healthz after a huge request: %v", err)
	}
}

func TestHotReload(t *testing.T) {
	dir := t.TempDir()
	testkb.BuildInto(t, dir, files, nil)
	tl := newTools(t, dir)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go tl.live.Watch(ctx, 20*time.Millisecond, nil)
	h := newHandler(tl, &serveOptions{}, false)

	// A request in flight holds the old index.
	old, release, err := tl.live.Acquire()
	if err != nil {
		t.Fatal(err)
	}
	changed := testkb.Files{}
	for k, v := range files {
		changed[k] = v
	}
	changed[".kb/zeppelin.md"] = "# Zeppelins\n\nThe zeppelin lands at noon.\n"
	testkb.BuildInto(t, dir, changed, nil)

	deadline := time.Now().Add(time.Second)
	for {
		if _, body := get(t, h, "/search?q=zeppelin", nil); strings.Contains(body, "zeppelin.md") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the new artifact was not served within a second")
		}
		time.Sleep(10 * time.Millisecond)
	}
	// The old index still answers its request, then is released.
	resp, err := old.Search(context.Background(), query.Request{Query: "rollback"})
	if err != nil || len(resp.Results) == 0 {
		t.Errorf("in-flight request on the old index: %v", err)
	}
	release()
	release() // releasing twice is harmless
}

// Agents know their working directory as an absolute path; inside the
// repository it means the same as the path relative to the root.
func TestMCPAbsoluteDir(t *testing.T) {
	tl := newTools(t, testkb.Build(t, files))
	tl.root = "/work/repo"
	cs := connect(t, tl)
	res, out := mcptest.Call(t, cs, "knowledge_context", map[string]any{"dir": "/work/repo/services/api"})
	if res.IsError || out["dir"] != "services/api" || !strings.Contains(out["text"].(string), "listens on 8080") {
		t.Errorf("absolute dir inside the repository: %v %s", out, mcptest.Text(res))
	}
	res, _ = mcptest.Call(t, cs, "knowledge_search", map[string]any{"query": "deploy", "dir": "/work/other"})
	if !res.IsError || !strings.Contains(mcptest.Text(res), "outside the repository at /work/repo") {
		t.Errorf("absolute dir outside the repository: error=%v %s", res.IsError, mcptest.Text(res))
	}
	tl.root = ""
	res, _ = mcptest.Call(t, cs, "knowledge_search", map[string]any{"query": "deploy", "dir": "/work/repo"})
	if !res.IsError || !strings.Contains(mcptest.Text(res), "relative to the repository root") {
		t.Errorf("absolute dir without a repository: error=%v %s", res.IsError, mcptest.Text(res))
	}
}

// recordingTools are the tools over an artifact of files, recording use in
// a state directory of the test's own.
func recordingTools(t *testing.T) (dir string, tl *served, streams *cli.Streams) {
	t.Helper()
	state := t.TempDir()
	streams = &cli.Streams{Err: io.Discard, Getenv: func(k string) string {
		return map[string]string{"XDG_STATE_HOME": state}[k]
	}}
	dir = testkb.Build(t, files)
	tl = newTools(t, dir)
	tl.usage = newUsage(streams)
	return dir, tl, streams
}

// Documents handed out over HTTP and MCP are recorded with their door; the
// knowledge index of the context then ranks by that use.
func TestUsageRecorded(t *testing.T) {
	dir, tl, streams := recordingTools(t)
	h := newHandler(tl, &serveOptions{}, false)
	for _, target := range []string{"/search?q=rollback&n=1", "/get?topic=memories/001-retry"} {
		if status, body := get(t, h, target, nil); status != 200 {
			t.Fatalf("GET %s: %d %s", target, status, body)
		}
	}
	cs := connect(t, tl)
	mcptest.Call(t, cs, "knowledge_get", map[string]any{"ref": "memories/001-retry"})
	mcptest.Call(t, cs, "knowledge_get", map[string]any{"ref": "memories/001-retry"})

	sum, path, err := usage.ReadFile(dir, streams.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	log, _ := os.ReadFile(path)
	for _, want := range []string{`"via":"http","op":"search","path":".kb/deploy.md"`, `"via":"http","op":"get","path":".kb/memories/001-retry.md"`,
		`"via":"mcp","op":"get","path":".kb/memories/001-retry.md"`} {
		if !strings.Contains(string(log), want) {
			t.Errorf("usage log lacks %s:\n%s", want, log)
		}
	}
	if u := sum.Docs[".kb/memories/001-retry.md"]; u == nil || u.Count != 3 {
		t.Errorf("memory used %+v, want 3 times", u)
	}
	res, got := mcptest.Call(t, cs, "knowledge_context", map[string]any{})
	out, _ := got["text"].(string)
	if res.IsError || !strings.Contains(out, "- memories/001-retry: Retry the billing API with backoff.") ||
		strings.Index(out, "memories/001-retry") > strings.Index(out, "- deploy") {
		t.Errorf("knowledge_context does not end with the memory first in its index:\n%s", out)
	}
}

// Searches beyond the slots wait, then get a 503 that says to retry; a
// search whose time runs out stops with the same reader.
func TestHTTPSearchesAreBounded(t *testing.T) {
	h := newHandler(newTools(t, testkb.Build(t, files)), &serveOptions{}, false)
	defer func(q, s time.Duration) { queueTimeout, searchTimeout = q, s }(queueTimeout, searchTimeout)
	queueTimeout = 20 * time.Millisecond
	for range cap(searchSlots) {
		searchSlots <- struct{}{}
	}
	status, body := get(t, h, "/search?q=deploy", nil)
	for range cap(searchSlots) {
		<-searchSlots
	}
	if status != http.StatusServiceUnavailable || !strings.Contains(body, "too many searches at once") {
		t.Errorf("with every slot taken: %d %s", status, body)
	}
	searchTimeout = 0
	if status, body := get(t, h, "/search?q=deploy", nil); status != http.StatusServiceUnavailable || !strings.Contains(body, "ran over") {
		t.Errorf("with no time to search: %d %s", status, body)
	}
	searchTimeout = time.Minute
	if status, _ := get(t, h, "/search?q=deploy", nil); status != 200 {
		t.Errorf("once free: %d", status)
	}
}

// The servers let the heap grow to three times what it holds before
// collecting, unless GOGC says otherwise.
func TestServersPaceTheCollector(t *testing.T) {
	old := debug.SetGCPercent(100)
	defer debug.SetGCPercent(old)
	paceServerGC(&cli.Streams{Getenv: func(string) string { return "" }})
	if got := debug.SetGCPercent(100); got != 200 {
		t.Errorf("pace %d, want 200", got)
	}
	paceServerGC(&cli.Streams{Getenv: func(k string) string { return map[string]string{"GOGC": "50"}[k] }})
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("with GOGC set, pace %d, want it left alone (100)", got)
	}
}
