package kbqserve

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kbqdev/kbq/internal/mcptest"
	"github.com/kbqdev/kbq/internal/testkb"
	"github.com/kbqdev/kbq/query"
)

// A server started before any artifact exists answers, says what to run,
// and serves the artifact once it appears.
func TestMCPWithoutArtifact(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".kbq")
	live := query.NewLive(dir, query.DefaultRanking())
	t.Cleanup(func() { live.Close() })
	cs := connect(t, &served{live: live})
	res, _ := mcptest.Call(t, cs, "knowledge_search", map[string]any{"query": "deploy"})
	if !res.IsError || !strings.Contains(mcptest.Text(res), "has no manifest.json yet: build the artifact with `kbc build`") {
		t.Fatalf("search without an artifact: error %v, %q", res.IsError, mcptest.Text(res))
	}
	testkb.BuildInto(t, dir, files, nil)
	if err := live.Reload(); err != nil {
		t.Fatal(err)
	}
	res, _ = mcptest.Call(t, cs, "knowledge_search", map[string]any{"query": "deploy"})
	if res.IsError || !strings.Contains(mcptest.Text(res), ".kb/deploy.md") {
		t.Fatalf("search once built: %q", mcptest.Text(res))
	}
}

// Lines that are not JSON-RPC get an error reply and the session goes on.
func TestStdioBadLines(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	live := query.NewLive(t.TempDir(), query.DefaultRanking())
	t.Cleanup(func() { live.Close() })
	done := make(chan error, 1)
	go func() { done <- newMCPServer(&served{live: live}).Run(ctx, stdioTransport(inR, outW)) }()

	replies := bufio.NewScanner(outR)
	send := func(line string) map[string]any {
		t.Helper()
		if _, err := io.WriteString(inW, line+"\n"); err != nil {
			t.Fatal(err)
		}
		if !replies.Scan() {
			t.Fatalf("no reply to %q: %v", line, replies.Err())
		}
		var m map[string]any
		if err := json.Unmarshal(replies.Bytes(), &m); err != nil {
			t.Fatalf("reply %q: %v", replies.Text(), err)
		}
		return m
	}
	code := func(m map[string]any) float64 {
		e, _ := m["error"].(map[string]any)
		c, _ := e["code"].(float64)
		return c
	}
	if m := send(`{"jsonrpc":"2.0","id":1,"method":"initialize"`); code(m) != -32700 || m["id"] != nil {
		t.Fatalf("truncated JSON: %v", m)
	}
	if m := send(`not json at all`); code(m) != -32700 {
		t.Fatalf("text: %v", m)
	}
	if m := send(`{"jsonrpc":"1.0","id":7,"method":"x"}`); code(m) != -32600 || m["id"] != float64(7) {
		t.Fatalf("wrong version: %v", m)
	}
	if m := send(`[]`); code(m) != -32600 {
		t.Fatalf("empty batch: %v", m)
	}
	if m := send(`{"jsonrpc":"2.0","id":null,"method":"ping"}`); code(m) != -32600 || m["id"] != nil {
		t.Fatalf("a null id: %v", m)
	}
	init := `{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	m := send(init)
	result, _ := m["result"].(map[string]any)
	if m["id"] != float64(2) || result["serverInfo"] == nil {
		t.Fatalf("initialize after bad lines: %v", m)
	}
	inW.Close()
	if err := <-done; err != nil && !strings.Contains(err.Error(), "EOF") {
		t.Fatalf("server ended with %v", err)
	}
}

// kbq serve started before the artifact exists answers 503 saying what to
// run, then serves it.
func TestHTTPWithoutArtifact(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".kbq")
	live := query.NewLive(dir, query.DefaultRanking())
	t.Cleanup(func() { live.Close() })
	h := newHandler(&served{live: live}, &serveOptions{}, false)
	for _, target := range []string{"/search?q=deploy", "/healthz", "/stats"} {
		if status, body := get(t, h, target, nil); status != 503 || !strings.Contains(body, "kbc build") {
			t.Errorf("GET %s: %d %s", target, status, body)
		}
	}
	testkb.BuildInto(t, dir, files, nil)
	if err := live.Reload(); err != nil {
		t.Fatal(err)
	}
	if status, body := get(t, h, "/search?q=deploy", nil); status != 200 || !strings.Contains(body, ".kb/deploy.md") {
		t.Errorf("GET /search once built: %d %s", status, body)
	}
}
