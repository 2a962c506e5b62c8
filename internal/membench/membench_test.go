package membench

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/kbqdev/kbq/compiler"
	"github.com/kbqdev/kbq/embedding"
	"github.com/kbqdev/kbq/internal/testreq"
	"github.com/kbqdev/kbq/query"
)

// searcher builds every project of b, with vectors of enc when it is not
// nil, and searches them in mode.
func searcher(t *testing.T, b *Bench, mode string, enc *embedding.Encoder) Searcher {
	t.Helper()
	for _, p := range b.Projects {
		for path, text := range p.Files {
			if d := compiler.Validate(path, []byte(text)); d.Errors() > 0 {
				t.Fatalf("%s/%s: %v\n%s", p.Name, path, d, text)
			}
		}
	}
	indexes, err := Build(context.Background(), b, t.TempDir(), enc, query.DefaultRanking())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, ix := range indexes {
			ix.Close()
		}
	})
	return Search(context.Background(), indexes, enc, mode, 0)
}

// The generator is deterministic, its histories compile, and every
// question names sources that exist.
func TestGenerate(t *testing.T) {
	a, b := Generate(7, 2, 16), Generate(7, 2, 16)
	if len(a.Questions) != 32 || len(a.Projects) != 2 {
		t.Fatalf("%d questions of %d projects", len(a.Questions), len(a.Projects))
	}
	for i := range a.Projects {
		for path, text := range a.Projects[i].Files {
			if b.Projects[i].Files[path] != text {
				t.Fatalf("%s differs between two runs of one seed", path)
			}
		}
	}
	for _, q := range a.Questions {
		var files map[string]string
		for _, p := range a.Projects {
			if p.Name == q.Project {
				files = p.Files
			}
		}
		for _, p := range append(q.Required, q.Harmful...) {
			if _, ok := files[p]; !ok {
				t.Errorf("%s names %s, which %s lacks", q.ID, p, q.Project)
			}
		}
		if (q.Category == Unanswerable) != (len(q.Required) == 0) {
			t.Errorf("%s: %s with %d required sources", q.ID, q.Category, len(q.Required))
		}
	}
}

// A small run: kbq's lexical search on two projects, each metric above
// the floor it reached when written, so that ranking changes that make
// memory answers worse fail here.
func TestSmallRun(t *testing.T) {
	b := Generate(11, 2, 40)
	r, err := Evaluate(b.Questions, searcher(t, b, query.ModeLexical, nil))
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	r.Write(&out, "lexical")
	t.Logf("\n%s", out.String())
	for name, floor := range map[string][2]float64{
		"recall@10": {r.All.Recall10, 0.9},
		"MRR":       {r.All.MRR, 0.7},
		"stale":     {-r.All.Stale, -0.002},
	} {
		if floor[0] < floor[1] {
			t.Errorf("%s %.3f, under its floor %.3f", name, floor[0], floor[1])
		}
	}
}

// A small run of the default mode with all-MiniLM-L6-v2 (KBQ_TEST_MODEL):
// it says nothing is known when nothing answers, finds both halves of an
// answer in two memories, never returns what was replaced, and is at
// least as good as words alone in every category.
func TestSmallRunHybrid(t *testing.T) {
	dir := os.Getenv("KBQ_TEST_MODEL")
	if dir == "" {
		testreq.Skip(t, testreq.Model, "KBQ_TEST_MODEL names no model directory")
	}
	enc, err := embedding.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	b := Generate(11, 2, 40)
	lexical, err := Evaluate(b.Questions, searcher(t, b, query.ModeLexical, nil))
	if err != nil {
		t.Fatal(err)
	}
	hybrid, err := Evaluate(b.Questions, searcher(t, b, query.ModeHybrid, enc))
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	lexical.Write(&out, "lexical")
	hybrid.Write(&out, "hybrid")
	t.Logf("\n%s", out.String())
	for name, floor := range map[string][2]float64{
		"strict":                  {hybrid.All.Strict, 0.85},
		"abstention":              {hybrid.ByCategory[Unanswerable].Abstention, 0.6},
		"two-sessions, recall@10": {hybrid.ByCategory[TwoSessions].Recall10, 0.9},
		"two-sessions, all in 5":  {hybrid.ByCategory[TwoSessions].AllIn5, 0.5},
		"stale":                   {-hybrid.All.Stale, -0.002},
	} {
		if floor[0] < floor[1] {
			t.Errorf("hybrid %s %.3f, under its floor %.3f", name, floor[0], floor[1])
		}
	}
	for _, c := range Categories {
		if h, l := hybrid.ByCategory[c].Strict, lexical.ByCategory[c].Strict; h < l {
			t.Errorf("%s: hybrid strict %.3f under lexical %.3f", c, h, l)
		}
	}
}
