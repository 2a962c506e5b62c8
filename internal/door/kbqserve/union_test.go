package kbqserve

import (
	"io"
	"os"
	"strings"
	"testing"

	"github.com/kbqdev/kbq/internal/cli"
	"github.com/kbqdev/kbq/internal/mcptest"
	"github.com/kbqdev/kbq/internal/testkb"
	"github.com/kbqdev/kbq/internal/usage"
	"github.com/kbqdev/kbq/query"
)

// Several artifacts served as one: MCP and HTTP search them together,
// each result names its repository, and get, list and stats take
// REPO:PATH.
func TestServersReadSeveralArtifacts(t *testing.T) {
	state := t.TempDir()
	streams := &cli.Streams{Err: io.Discard, Getenv: func(k string) string {
		return map[string]string{"XDG_STATE_HOME": state}[k]
	}}
	tl := &served{usage: newUsage(streams)}
	dirs := map[string]string{}
	for name, fs := range map[string]testkb.Files{
		"api": {".kb/keys.md": "# Keys\n\nRotate the api signing key every 90 days.\n", ".kb/deploy.md": "# Deploy\n\nDeploy the api with make deploy.\n",
			".kb/memories/001-a.md": "---\nid: 1\ncreated: 2024-05-01T10:00:00Z\n---\nThe api's first memory.\n"},
		"web": {".kb/keys.md": "# Keys\n\nRotate the web signing key from the console.\n", ".kb/context.md": "Web pages are served by nginx.\n",
			".kb/memories/001-w.md": "---\nid: 1\ncreated: 2024-05-01T10:00:00Z\n---\nThe web's first memory.\n"},
	} {
		dirs[name] = testkb.Build(t, fs)
		live, err := query.OpenLive(dirs[name], query.DefaultRanking())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { live.Close() })
		tl.many = append(tl.many, namedLive{name, live, 0})
	}
	cs := connect(t, tl)
	res, out := mcptest.Call(t, cs, "knowledge_search", map[string]any{"query": "rotate signing key"})
	results, _ := out["results"].([]any)
	if res.IsError || len(results) != 2 {
		t.Fatalf("search: %v %s", out, mcptest.Text(res))
	}
	repos := map[any]bool{}
	for _, r := range results {
		repos[r.(map[string]any)["repo"]] = true
	}
	if !repos["api"] || !repos["web"] || !strings.Contains(mcptest.Text(res), "`api:.kb/keys.md:") {
		t.Errorf("search results %v\n%s", results, mcptest.Text(res))
	}
	res, out = mcptest.Call(t, cs, "knowledge_search", map[string]any{"query": "rotate repo:web"})
	if results, _ := out["results"].([]any); res.IsError || len(results) != 1 || results[0].(map[string]any)["repo"] != "web" {
		t.Errorf("repo:web: %v %s", out, mcptest.Text(res))
	}
	res, _ = mcptest.Call(t, cs, "knowledge_get", map[string]any{"ref": "web:.kb/keys.md"})
	if res.IsError || !strings.Contains(mcptest.Text(res), "from the console") {
		t.Errorf("get web:.kb/keys.md: %s", mcptest.Text(res))
	}
	res, _ = mcptest.Call(t, cs, "knowledge_get", map[string]any{"ref": "keys"})
	if !res.IsError || !strings.Contains(mcptest.Text(res), "api:.kb/keys.md") || !strings.Contains(mcptest.Text(res), "web:.kb/keys.md") {
		t.Errorf("get keys, in both: %s", mcptest.Text(res))
	}
	// REPO:topic, as the command line takes it.
	res, _ = mcptest.Call(t, cs, "knowledge_get", map[string]any{"ref": "web:keys"})
	if res.IsError || !strings.Contains(mcptest.Text(res), "from the console") {
		t.Errorf("get web:keys: %s", mcptest.Text(res))
	}
	res, _ = mcptest.Call(t, cs, "knowledge_get", map[string]any{"ref": "api:keys"})
	if res.IsError || !strings.Contains(mcptest.Text(res), "every 90 days") {
		t.Errorf("get api:keys: %s", mcptest.Text(res))
	}
	// memory:1 is in both: name one; REPO:memory:1 is that one's.
	res, _ = mcptest.Call(t, cs, "knowledge_get", map[string]any{"ref": "memory:1"})
	if text := mcptest.Text(res); !res.IsError || !strings.Contains(text, "in several repositories; name one: ") ||
		!strings.Contains(text, "api:.kb/memories/001-a.md") || !strings.Contains(text, "web:.kb/memories/001-w.md") {
		t.Errorf("get memory:1, in both: %s", mcptest.Text(res))
	}
	res, _ = mcptest.Call(t, cs, "knowledge_get", map[string]any{"ref": "web:memory:1"})
	if res.IsError || !strings.Contains(mcptest.Text(res), "The web's first memory") {
		t.Errorf("get web:memory:1: %s", mcptest.Text(res))
	}
	res, _ = mcptest.Call(t, cs, "knowledge_get", map[string]any{"ref": "deploy"})
	if res.IsError || !strings.Contains(mcptest.Text(res), "make deploy") {
		t.Errorf("get deploy, in one: %s", mcptest.Text(res))
	}
	res, out = mcptest.Call(t, cs, "knowledge_list", map[string]any{})
	if docs, _ := out["documents"].([]any); res.IsError || len(docs) != 6 {
		t.Errorf("list: %v", out)
	}
	// The context is one repository's: named, or asked for by name.
	res, _ = mcptest.Call(t, cs, "knowledge_context", map[string]any{"repo": "web"})
	if res.IsError || !strings.Contains(mcptest.Text(res), "served by nginx") {
		t.Errorf("context of web: %s", mcptest.Text(res))
	}
	res, _ = mcptest.Call(t, cs, "knowledge_context", map[string]any{})
	if text := mcptest.Text(res); !res.IsError || !strings.Contains(text, "name one of ") || !strings.Contains(text, "api") || !strings.Contains(text, "web") {
		t.Errorf("context of no repository: %s", mcptest.Text(res))
	}
	h := newHandler(tl, &serveOptions{}, false)
	for target, want := range map[string]string{
		"/search?q=rotate+repo:api": `"repo":"api"`,
		"/get?path=web:.kb/keys.md": "from the console",
		"/get?ref=web:keys":         "from the console",
		"/get?topic=api:deploy":     "make deploy",
		"/stats":                    `"documents":6`,
		"/healthz":                  `"documents":6,"repos":[{"name":"`,
		"/list":                     `"repo":"web","path":".kb/keys.md"`,
		"/context?repo=web":         "served by nginx",
	} {
		if code, body := get(t, h, target, nil); code != 200 || !strings.Contains(body, want) {
			t.Errorf("%s: %d %s", target, code, body)
		}
	}

	if _, body := get(t, h, "/healthz", nil); !strings.Contains(body, `"name":"api","documents":3`) || !strings.Contains(body, `"name":"web","documents":3`) {
		t.Errorf("/healthz names one repository, not each: %s", body)
	}

	// Each document handed out is recorded in its own artifact's log.
	for name, want := range map[string][]string{
		"api": {`"op":"search","path":".kb/keys.md"`, `"op":"get","path":".kb/deploy.md"`},
		"web": {`"op":"search","path":".kb/keys.md"`, `"op":"get","path":".kb/keys.md"`},
	} {
		_, path, err := usage.ReadFile(dirs[name], streams.Getenv)
		if err != nil {
			t.Fatal(err)
		}
		log, _ := os.ReadFile(path)
		for _, w := range want {
			if !strings.Contains(string(log), w) {
				t.Errorf("%s's usage log lacks %s:\n%s", name, w, log)
			}
		}
	}
}
