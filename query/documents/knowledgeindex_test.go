package documents

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/kbqdev/kbq/artifact"
	"github.com/kbqdev/kbq/knowledge"
)

// everyInForce is knowledgeIndex as a copy of every document in force,
// sorted: what the index must list.
func everyInForce(docs []artifact.Document, dir string, retired map[string]string, opts ContextOptions) []artifact.Document {
	var inForce []artifact.Document
	used := false
	for _, d := range docs {
		if _, gone := retired[d.Path]; gone || d.Kind == knowledge.KindContext || !knowledge.ScopeContains(d.Scope, dir) ||
			slices.ContainsFunc(d.ShadowedBy, func(s string) bool { return knowledge.ScopeContains(s, dir) }) {
			continue
		}
		inForce = append(inForce, d)
		used = used || opts.Uses[d.Path] > 0
	}
	weight := func(d artifact.Document) float64 {
		if used {
			return float64(opts.Uses[d.Path])
		}
		if d.Importance == nil {
			return 0
		}
		return *d.Importance
	}
	inForce = slices.DeleteFunc(inForce, func(d artifact.Document) bool { return weight(d) <= 0 })
	slices.SortStableFunc(inForce, func(a, b artifact.Document) int {
		return cmp.Or(cmp.Compare(weight(b), weight(a)), cmp.Compare(a.Path, b.Path))
	})
	return inForce[:min(opts.IndexSize, len(inForce))]
}

// The knowledge index lists the documents a sort of every document in
// force would put first: by use, else by importance, ties by path; none
// out of scope, retired, shadowed there, a context or without weight.
func TestKnowledgeIndexPicksTheFirst(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 49))
	scopes := []string{knowledge.ScopeGlobal, knowledge.ScopeProject, "services", "services/api", "web"}
	kinds := []string{knowledge.KindTopic, knowledge.KindMemory, knowledge.KindContext}
	for round := range 300 {
		var docs []artifact.Document
		uses, retired := map[string]int{}, map[string]string{}
		for i := range rng.IntN(200) {
			d := artifact.Document{Path: fmt.Sprintf(".kb/d%03d.md", rng.IntN(1000)*1000+i), Scope: scopes[rng.IntN(len(scopes))], Kind: kinds[rng.IntN(len(kinds))]}
			if rng.IntN(3) > 0 {
				imp := float64(rng.IntN(4)) / 4 // ties, and zeros
				d.Importance = &imp
			}
			if rng.IntN(8) == 0 {
				d.ShadowedBy = []string{scopes[rng.IntN(len(scopes))]}
			}
			if round%2 == 0 && rng.IntN(5) == 0 {
				uses[d.Path] = rng.IntN(3)
			}
			if rng.IntN(10) == 0 {
				retired[d.Path] = "superseded"
			}
			docs = append(docs, d)
		}
		dir := []string{"", "services/api", "web/app", "services"}[round%4]
		opts := ContextOptions{IndexSize: 1 + rng.IntN(8), Uses: uses}
		got, want := knowledgeIndex(docs, dir, retired, opts), everyInForce(docs, dir, retired, opts)
		if !slices.EqualFunc(got, want, func(a, b artifact.Document) bool { return a.Path == b.Path }) {
			t.Fatalf("round %d, dir %q, %d documents: index %v, want %v", round, dir, len(docs), paths(got), paths(want))
		}
	}
}

func paths(docs []artifact.Document) []string {
	var out []string
	for _, d := range docs {
		out = append(out, d.Path)
	}
	return out
}
