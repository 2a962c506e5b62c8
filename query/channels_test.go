package query_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/kbqdev/kbq/internal/testkb"
	"github.com/kbqdev/kbq/query"
)

// A query means the same on every channel: in semantic and hybrid modes,
// every filter and exclusion of the query constrains the vectors' results
// too, and a required word or phrase is honoured.
func TestFiltersBindEveryChannel(t *testing.T) {
	embedder := wordVectors{dims: 64}
	files := testkb.Files{
		".kb/ops/deploy.md":     "---\ntags: [ops]\n---\n# Deploy\n\nDeploy the service with the pipeline; rollback is manual.\n",
		".kb/ops/rollback.md":   "---\ntags: [ops, legacy]\n---\n# Rollback\n\nRollback the service deploy from the pipeline by hand.\n",
		".kb/dev/pipeline.md":   "---\ntags: [dev]\n---\n# Pipeline\n\nThe pipeline builds the service before deploy.\n",
		".kb/memories/001-a.md": "---\nid: 1\ncreated: 2024-01-01T00:00:00Z\n---\nThe deploy pipeline of the service broke on Friday.\n",
		".kb/memories/002-b.md": "---\nid: 2\ncreated: 2024-01-01T00:00:00Z\n---\nDeploy the service after the pipeline is green, with care.\n",
	}
	ix, err := query.Open(buildWithVectors(t, files, embedder))
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	base := "deploy the service pipeline"
	for _, tc := range []struct {
		q    string
		keep func(path string) bool
	}{
		{"kind:memory", func(p string) bool { return strings.Contains(p, "/memories/") }},
		{"-kind:memory", func(p string) bool { return !strings.Contains(p, "/memories/") }},
		{"tag:ops", func(p string) bool { return strings.HasPrefix(p, ".kb/ops/") }},
		{"-tag:legacy", func(p string) bool { return p != ".kb/ops/rollback.md" }},
		{"path:.kb/dev/", func(p string) bool { return strings.HasPrefix(p, ".kb/dev/") }},
		{"-rollback", func(p string) bool { return p != ".kb/ops/deploy.md" && p != ".kb/ops/rollback.md" }},
		{"NOT rollback", func(p string) bool { return p != ".kb/ops/deploy.md" && p != ".kb/ops/rollback.md" }},
		{"+friday", func(p string) bool { return p == ".kb/memories/001-a.md" }},
		{`+"with care"`, func(p string) bool { return p == ".kb/memories/002-b.md" }},
		{`-"by hand"`, func(p string) bool { return p != ".kb/ops/rollback.md" }},
	} {
		q := base + " " + tc.q
		vec, _ := embedder.Embed(context.Background(), []string{q})
		var want []string
		for _, mode := range []string{query.ModeLexical, query.ModeSemantic, query.ModeHybrid} {
			resp, err := ix.Search(context.Background(), query.Request{Query: q, Vector: vec[0], Mode: mode, N: 10, Floor: query.FloorOff})
			if err != nil {
				t.Fatalf("%s %q: %v", mode, q, err)
			}
			var got []string
			for _, r := range resp.Results {
				got = append(got, r.Path)
				if !tc.keep(r.Path) {
					t.Errorf("%s %q returned %s, which the query leaves out", mode, q, r.Path)
				}
			}
			slices.Sort(got)
			if mode == query.ModeLexical {
				want = got
				if len(want) == 0 {
					t.Fatalf("%q: nothing found lexically", q)
				}
			} else if !slices.Equal(got, want) {
				t.Errorf("%s %q found %v, the lexical channel %v", mode, q, got, want)
			}
		}
	}
}
