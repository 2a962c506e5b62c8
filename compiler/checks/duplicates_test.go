package checks

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func TestJaccard(t *testing.T) {
	a := shingles("one two three four five six")
	if len(a) != 4 || jaccard(a, a) != 1 {
		t.Errorf("shingles %v, self-similarity %v", a, jaccard(a, a))
	}
	b := shingles("One, two; three! four five SEVEN")
	if got := jaccard(a, b); got != 3.0/5 {
		t.Errorf("jaccard = %v, want 3/5 (punctuation and case ignored)", got)
	}
	if shingles("two words") != nil || jaccard(nil, a) != 0 {
		t.Error("fewer than three words must have no shingles")
	}
}

// Among many documents, the MinHash bands find the same near duplicates
// as comparing every pair.
func TestDuplicatesManyDocuments(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	vocab := make([]string, 2000)
	for i := range vocab {
		vocab[i] = fmt.Sprintf("w%d", i)
	}
	text := func(n int) []string {
		w := make([]string, n)
		for i := range w {
			w[i] = vocab[rng.IntN(len(vocab))]
		}
		return w
	}
	var docs []DupDoc
	add := func(words []string, scope string) {
		i := len(docs)
		docs = append(docs, DupDoc{Path: fmt.Sprintf(".kb/d%03d.md", i), Display: fmt.Sprintf(".kb/d%03d.md", i),
			Scope: scope, Line: 1, Set: shingles(strings.Join(words, " ")), Checked: true})
	}
	for range 300 {
		add(text(60), "project")
	}
	// A near copy (a word changed in 60: 95% of triples kept), and the
	// same copy in another scope, which is not a duplicate.
	base := text(60)
	add(base, "project")
	near := slices.Clone(base)
	near[30] = "changed"
	add(near, "project")
	add(near, "services/api")
	got := Duplicates(docs, 0.8)
	if len(got) != 1 || got[0].Path != ".kb/d301.md" || !strings.Contains(got[0].Message, ".kb/d300.md:1") {
		t.Fatalf("duplicates = %v, want d301 nearly duplicating d300", got)
	}
	// Brute force agrees: no other pair reaches the threshold.
	for i := range docs {
		for j := i + 1; j < len(docs); j++ {
			if docs[i].Scope == docs[j].Scope && jaccard(docs[i].Set, docs[j].Set) >= 0.8 && !(i == 300 && j == 301) {
				t.Errorf("%s and %s are duplicates the bands missed", docs[i].Path, docs[j].Path)
			}
		}
	}
}
