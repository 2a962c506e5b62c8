package documents_test

import (
	"context"
	"fmt"
	"runtime/debug"
	"testing"

	"github.com/kbqdev/kbq/compiler"
	"github.com/kbqdev/kbq/internal/querytest"
	"github.com/kbqdev/kbq/internal/testkb"
	"github.com/kbqdev/kbq/query"
	"github.com/kbqdev/kbq/query/documents"
)

// TestEveryFlippedByteIsAnErrorNotAPanic flips every byte of every file of
// a small artifact with vectors, one at a time, and reads the artifact as
// kbq search, get, list and context do: each may fail, none may panic.
func TestEveryFlippedByteIsAnErrorNotAPanic(t *testing.T) {
	files := testkb.Files{
		".kb/context.md":            "Always run make check before pushing.\n",
		".kb/deploy.md":             "---\ntitle: Deploying\ntags: [ops, deploy]\n---\n# Deploying\n\nDeploy with make deploy.\n\n## Rolling back\n\nRoll back with make rollback.\n",
		".kb/memories/001-retry.md": "---\nid: 1\ncreated: 2024-05-01T10:00:00Z\n---\nRetry the billing API with backoff.\n",
		".kb/old.md":                "---\ntitle: Old deploys\nstatus: deprecated\n---\nDeploys used to run by hand.\n",
		"services/api/.kb/api.md":   "# The API\n\nThe API listens on 8080 and deploys with helm.\n",
		"services/api/AGENTS.md":    "The API's tests run with go test.\n",
	}
	dir := t.TempDir()
	opts := compiler.BuildOptions{Out: dir, BuiltAt: testkb.BuiltAt, Options: compiler.Options{Embedder: querytest.Letters{}}}
	if _, err := compiler.Build(context.Background(), files, opts); err != nil {
		t.Fatal(err)
	}
	vec := [][]float32{querytest.LetterVector("roll back a deploy")}
	stride := 1
	if testing.Short() {
		stride = 7
	}
	panics := 0
	flips := querytest.FlipEachByte(t, dir, stride, func(rel string, off int) {
		if msg := readAll(dir, vec[0]); msg != "" {
			panics++
			if panics <= 5 {
				t.Errorf("%s, byte %#x flipped: %s", rel, off, msg)
			}
		}
	})
	t.Logf("%d flips, %d panics", flips, panics)
	if panics > 0 {
		t.Errorf("%d of %d flips panicked", panics, flips)
	}
}

// readAll reads the artifact in dir as every command does, and returns
// the first panic, "" for none.
func readAll(dir string, vec []float32) (msg string) {
	defer func() {
		if r := recover(); r != nil {
			msg = fmt.Sprintf("%v\n%s", r, debug.Stack())
		}
	}()
	ix, err := query.Open(dir)
	if err != nil {
		return ""
	}
	defer ix.Close()
	ctx := context.Background()
	for _, mode := range []string{query.ModeLexical, query.ModeSemantic, query.ModeHybrid} {
		ix.Search(ctx, query.Request{Query: "roll back deploy", Mode: mode, Vector: vec, N: 5})
		ix.Search(ctx, query.Request{Query: "deploy*", Mode: mode, Vector: vec, N: 5, AllScopes: true, Chunks: true})
	}
	if docs, err := ix.Documents(); err == nil {
		for _, d := range docs {
			ix.Text(ctx, d)
		}
	}
	documents.Get(ctx, ix, "deploy", "")
	documents.Get(ctx, ix, "memory:1", "")
	documents.Context(ctx, ix, "services/api", documents.ContextOptions{IndexSize: 5})
	ix.Stats(testkb.BuiltAt)
	return ""
}
