package query_test

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/kbqdev/kbq/artifact"
	"github.com/kbqdev/kbq/compiler"
	"github.com/kbqdev/kbq/internal/querytest"
	"github.com/kbqdev/kbq/internal/testkb"
	"github.com/kbqdev/kbq/query"
)

var vocabulary = strings.Fields(`deploy rollback retry backoff billing api gateway cache
	invoice queue worker timeout latency database migration schema index shard replica
	token session login password rotate secret config feature flag release canary metric
	alert pager incident postmortem runbook kubernetes helm terraform bucket storage`)

func sentence(r *rand.Rand, n int) string {
	words := make([]string, n)
	for i := range words {
		words[i] = vocabulary[r.IntN(len(vocabulary))]
	}
	return strings.Join(words, " ") + "."
}

func corpus(r *rand.Rand, n int) testkb.Files {
	files := testkb.Files{
		".kb/context.md":              "Project context: " + sentence(r, 12) + "\n",
		"services/api/.kb/context.md": "API context: " + sentence(r, 10) + "\n",
	}
	for i := range n {
		var b strings.Builder
		fmt.Fprintf(&b, "---\ntitle: Topic %d %s\ntags: [%s]\n---\n# Topic %d\n\n", i, vocabulary[i%len(vocabulary)], vocabulary[(i*7)%len(vocabulary)], i)
		for s := range 2 + r.IntN(6) {
			fmt.Fprintf(&b, "## Part %d\n\n%s\n\n%s\n\n", s, sentence(r, 20+r.IntN(60)), sentence(r, 30))
		}
		scope := ".kb/"
		if i%5 == 0 {
			scope = "services/api/.kb/"
		}
		files[fmt.Sprintf("%stopics/t%03d.md", scope, i)] = b.String()
	}
	for i := 1; i <= 10; i++ {
		files[fmt.Sprintf(".kb/memories/%03d-m.md", i)] = fmt.Sprintf("---\nid: %d\ncreated: 2024-05-01T10:00:00Z\n---\n%s\n", i, sentence(r, 15))
	}
	return files
}

// answers runs a fixed set of requests and returns everything they answer.
func answers(t *testing.T, dir string) string {
	t.Helper()
	out := querytest.Answers(t, dir, []query.Request{
		{Query: "deploy rollback"}, {Query: "retry backoff billing api", N: 20}, {Query: "cache", Chunks: true, N: 30},
		{Query: `"feature flag"`}, {Query: "release -canary", N: 10}, {Query: "kube*"}, {Query: "topic", N: 50},
		{Query: "deploy", Dir: "services/api", N: 10}, {Query: "token session", AllScopes: true, N: 15},
		{Query: "incident", Kinds: []string{"memory"}}, {Query: "tag:deploy", N: 40}, {Query: "alert pager", MaxTokens: 200},
		{Query: "schema migration index shard replica timeout latency", N: 25}, {Query: "topics", N: 5},
		{Query: "* NOT release", N: 50, Chunks: true}, {Query: "* -kube*", N: 50, AllScopes: true, Chunks: true},
	})
	ix := querytest.OpenDir(t, dir)
	m := ix.Manifest
	return out + fmt.Sprintf("%+v %+v\n", m.Counts, m.Fields)
}

func TestIncrementalAnswersLikeFull(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	files := corpus(r, 300)
	inc := t.TempDir()
	res := testkb.BuildInto(t, inc, files, nil)
	if res.Incremental {
		t.Fatal("the first build cannot be incremental")
	}
	for round := range 6 {
		next := maps.Clone(files)
		paths := make([]string, 0, len(next))
		for p := range next {
			if strings.Contains(p, "/topics/") {
				paths = append(paths, p)
			}
		}
		// Change a few topics, remove two, add three, and make a project
		// topic shadowed by a new directory one.
		for i := range 4 {
			p := paths[(round*13+i*31)%len(paths)]
			next[p] = next[p] + "\n## Edited\n\n" + sentence(r, 25) + "\n"
		}
		delete(next, paths[(round*17+5)%len(paths)])
		delete(next, paths[(round*19+9)%len(paths)])
		for i := range 3 {
			next[fmt.Sprintf(".kb/new/r%d-%d.md", round, i)] = "# New\n\n" + sentence(r, 40) + "\n"
		}
		next[fmt.Sprintf("services/api/.kb/topics/t%03d.md", round*5+1)] = "# Shadowing\n\n" + sentence(r, 20) + "\n"
		if round == 3 {
			next[".kb/memories/011-x.md"] = "---\nid: 11\ncreated: 2024-05-01T10:00:00Z\ntags: [pager]\n---\nA new memory about the pager.\n"
		}

		res := testkb.BuildInto(t, inc, next, nil)
		if !res.Incremental || res.Reused == 0 || res.Indexed > 20 {
			t.Fatalf("round %d: incremental=%v, reused %d, indexed %d", round, res.Incremental, res.Reused, res.Indexed)
		}
		full := t.TempDir()
		testkb.BuildInto(t, full, next, nil)
		a, b := answers(t, inc), answers(t, full)
		if a != b {
			t.Fatalf("round %d: incremental and full builds answer differently:\n%s", round, firstDifference(a, b))
		}
		files = next
	}
}

func firstDifference(a, b string) string {
	la, lb := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range min(len(la), len(lb)) {
		if la[i] != lb[i] {
			return fmt.Sprintf("line %d:\nincremental: %.500s\nfull:        %.500s", i, la[i], lb[i])
		}
	}
	return fmt.Sprintf("%d lines vs %d", len(la), len(lb))
}

func TestIncrementalFallsBackToFull(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	files := corpus(r, 100)
	dir := t.TempDir()
	testkb.BuildInto(t, dir, files, nil)
	// Nothing changed: the index is kept as it is.
	res := testkb.BuildInto(t, dir, files, nil)
	if !res.Incremental || res.Indexed != 0 {
		t.Errorf("unchanged rebuild: incremental=%v indexed=%d", res.Incremental, res.Indexed)
	}
	// Half the documents changed: a full build is cheaper and compacts.
	next := maps.Clone(files)
	i := 0
	for p := range next {
		if i%2 == 0 {
			next[p] += "\nmore\n"
		}
		i++
	}
	res = testkb.BuildInto(t, dir, next, nil)
	if res.Incremental {
		t.Error("half the documents changed, yet the build was incremental")
	}
	if answers(t, dir) != answers(t, testkb.Build(t, next)) {
		t.Error("the fallback full build answers differently")
	}
}

func TestIncrementalKeepGoingDropsUnchangedDuplicate(t *testing.T) {
	files := testkb.Files{
		".kb/memories/005-old.md": "---\nid: 5\ncreated: 2024-05-01T10:00:00Z\n---\nold zeppelin memory\n",
		".kb/a.md":                "# A\n\nfiller\n",
	}
	dir := t.TempDir()
	testkb.BuildInto(t, dir, files, nil)
	// A new memory sorts first and takes id 5: the unchanged one is now the
	// duplicate.
	next := maps.Clone(files)
	next[".kb/memories/001-new.md"] = "---\nid: 5\ncreated: 2024-05-02T10:00:00Z\n---\nnew zeppelin memory\n"
	res, err := compiler.Build(context.Background(), next, compiler.BuildOptions{Out: dir, KeepGoing: true, BuiltAt: testkb.BuiltAt})
	if err != nil || !res.Incremental || res.Skipped != 1 {
		t.Fatalf("build: %v incremental=%v skipped=%d", err, res.Incremental, res.Skipped)
	}
	ix, err := query.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if got := search(t, ix, query.Request{Query: "zeppelin"}); strings.Join(got, " ") != ".kb/memories/001-new.md" {
		t.Errorf("got %v, want only the new memory", got)
	}
	if m, _ := artifact.Read(dir); m.Counts.Documents != 2 {
		t.Errorf("manifest has %d documents, want 2", m.Counts.Documents)
	}
}
