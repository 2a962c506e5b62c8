package query_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kbqdev/kbq/internal/testkb"
	"github.com/kbqdev/kbq/query"
)

var update = flag.Bool("update", false, "rewrite the golden files of testdata/golden")

// goldenCorpus is a fixed knowledge base of several kinds and scopes,
// with titles, tags, headings, descriptions and importance: what the
// ranking weighs.
var goldenCorpus = testkb.Files{
	".kb/context.md":              "# Project\n\nDeploys go through the pipeline; rollbacks are manual.\n",
	".kb/deploy.md":               "---\ntitle: Deploying\ntags: [deploy, ops]\n---\n# Deploying\n\nRun make deploy from main. The pipeline builds, tests and ships.\n\n## Rollback\n\nRoll back with make rollback VERSION=tag; the previous release comes back.\n",
	".kb/pipeline.md":             "---\ntitle: The pipeline\ndescription: How CI builds, tests and deploys every commit\n---\n# Stages\n\nBuild, test, package, deploy. A failed stage stops the pipeline.\n",
	".kb/oncall.md":               "---\ntitle: On call\ntags: [ops]\nimportance: 0.9\n---\n# Paging\n\nPages go to the on-call engineer; a rollback is the first response to a bad deploy.\n",
	".kb/style.md":                "# Code style\n\nGofmt everything. Errors wrap with %w and name the object.\n",
	".kb/memories/001-retries.md": "---\nid: 1\ncreated: 2024-05-01T10:00:00Z\ntags: [http]\n---\nThe billing API rate-limits at 100 requests a second; retry with backoff.\n",
	".kb/memories/002-flaky.md":   "---\nid: 2\ncreated: 2024-05-02T10:00:00Z\n---\nThe integration tests are flaky on Mondays when the staging database is wiped.\n",
	"services/api/.kb/deploy.md":  "---\ntitle: Deploying the API\n---\n# Deploying the API\n\nThe API deploys with helm upgrade; rollback with helm rollback.\n",
	"services/api/.kb/limits.md":  "# Limits\n\nThe API allows 100 requests a second per key, and retries after 429 with backoff.\n",
}

// The ranking, written down: a handful of queries and their top results
// with scores over a fixed corpus, so that a change to ranking shows in the
// diff of testdata/golden/ranking.txt (go test ./query -run Golden -update
// rewrites it).
func TestRankingGolden(t *testing.T) {
	ix := open(t, goldenCorpus)
	var b strings.Builder
	for _, q := range []struct{ query, dir string }{
		{"how do we roll back a deploy", ""},
		{"rollback", "services/api"},
		{"pipeline stages", ""},
		{"rate limit retries", ""},
		{"rate limit retries", "services/api"},
		{"flaky tests", ""},
		{"\"make deploy\"", ""},
		{"deploy kind:topic -helm", ""},
		{"ci builds every commit", ""},
		{"depl*", ""},
	} {
		resp, err := ix.Search(context.Background(), query.Request{Query: q.query, Dir: q.dir, N: 5})
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%q from %q: %d total\n", q.query, q.dir, resp.Total)
		for i, r := range resp.Results {
			fmt.Fprintf(&b, "  %d. %.4f %s:%d-%d %s\n", i+1, r.Score, r.Path, r.Lines[0], r.Lines[1], r.Heading)
		}
	}
	golden := filepath.Join("testdata", "golden", "ranking.txt")
	if *update {
		if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./query -run Golden -update to write it)", err)
	}
	if got := b.String(); got != string(want) {
		t.Errorf("the ranking changed (if that is meant, rewrite %s with -update):\n got:\n%s\nwant:\n%s", golden, got, want)
	}
}
