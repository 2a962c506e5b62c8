package kbqserve

import (
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kbqdev/kbq/internal/answer"
	"github.com/kbqdev/kbq/internal/cli"
	"github.com/kbqdev/kbq/internal/testkb"
	"github.com/kbqdev/kbq/internal/usage"
	"github.com/kbqdev/kbq/query"
)

// What an <img> or a fetch on any web page sends: Sec-Fetch-Site
// cross-site, and no Origin. It is refused on every endpoint, and not
// counted as use, unless its Origin is explicitly allowed.
func TestCrossSiteRequestsAreRefused(t *testing.T) {
	state := t.TempDir()
	streams := &cli.Streams{Err: io.Discard, Getenv: func(k string) string {
		return map[string]string{"XDG_STATE_HOME": state}[k]
	}}
	dir := testkb.Build(t, files)
	tl := newTools(t, dir)
	tl.usage = answer.NewUsage(streams)
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
			var m map[string]int
			m["x"] = 1
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
	var paths []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && !strings.HasSuffix(p, ".lock") {
			paths = append(paths, p)
		}
		return err
	})
	stride := 1
	if testing.Short() {
		stride = 3
	}
	targets := []string{"/search?q=deploy+rollback", "/search?q=deploy*&all_scopes=true&chunks=true", "/get?topic=deploy", "/get?ref=memory:1",
		"/list", "/context?dir=services/api", "/stats", "/healthz"}
	flips, failed := 0, 0
	for _, p := range paths {
		orig, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for off := 0; off < len(orig); off += stride {
			damaged := append([]byte(nil), orig...)
			damaged[off] ^= 0xff
			os.WriteFile(p, damaged, 0o644)
			flips++
			live, err := query.OpenLive(dir, query.DefaultRanking())
			if err != nil {
				continue // refused at open: no request reads it
			}
			tl := &tools{live: live}
			h := newHandler(tl, &serveOptions{}, false)
			for _, target := range targets {
				if status, body := get(t, h, target, nil); status == 0 || status == 500 && strings.Contains(body, "internal error") {
					failed++
					if failed < 5 {
						rel, _ := filepath.Rel(dir, p)
						t.Errorf("%s byte %#x flipped: GET %s: %d %s", rel, off, target, status, body)
					}
				}
			}
			tl.live.Close()
		}
		os.WriteFile(p, orig, 0o644)
	}
	t.Logf("%d files, %d flips, %d requests each, %d failed", len(paths), flips, len(targets), failed)
}
