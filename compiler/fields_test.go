package compiler

import (
	"fmt"
	"testing"

	"github.com/kbqdev/kbq/artifact"
)

// fieldTerms renders a field's terms, frequencies and length.
func fieldTerms(f analyzed) string {
	s := fmt.Sprint(f.length)
	for _, t := range f.terms {
		s += fmt.Sprintf(" %s:%d", t.term, t.freq)
	}
	return s
}

// reference analyzes text the plain way: every term through the analyzer,
// counted in a map.
func reference(a artifact.Analysis, text string) string {
	an := artifact.NewAnalyzer(a)
	var f analyzed
	at := map[string]int{}
	an.Terms([]byte(text), func(term []byte, _, _ int) {
		f.length++
		if i, ok := at[string(term)]; ok {
			f.terms[i].freq++
			return
		}
		at[string(term)] = len(f.terms)
		f.terms = append(f.terms, fieldTerm{term: append([]byte(nil), term...), freq: 1})
	})
	return fieldTerms(f)
}

func TestFieldBuilderVocabulary(t *testing.T) {
	texts := []string{
		"The Runner runs; the runners RUN. Running is what a runner's legs do.",
		"the THE The tHe — stop words in every case",
		"Mixed: café CAFÉ Café, 日本語のテキスト, naïve résumé, don't won't it's",
		"runs run running",
		"",
	}
	for _, a := range []artifact.Analysis{artifact.DefaultAnalysis, {Stemmer: "none", Stopwords: "none"}} {
		b := newFieldBuilder(a)
		var built []analyzed
		var scratch []fieldTerm
		for round := range 2 {
			for _, text := range texts {
				// Into scratch memory, as chunks' bodies are analyzed.
				f := b.analyze([]byte(text), scratch[:0])
				scratch = f.terms
				if got, want := fieldTerms(f), reference(a, text); got != want {
					t.Errorf("%+v round %d, %q into scratch:\n got %s\nwant %s", a, round, text, got, want)
				}
				f = b.analyze([]byte(text), nil)
				built = append(built, f)
				if got, want := fieldTerms(f), reference(a, text); got != want {
					t.Errorf("%+v round %d, %q:\n got %s\nwant %s", a, round, text, got, want)
				}
			}
			b.reset() // a full vocabulary is forgotten between fields
		}
		// Fields built before a reset keep their terms.
		for i, f := range built {
			if got, want := fieldTerms(f), reference(a, texts[i%len(texts)]); got != want {
				t.Errorf("field %d changed after a reset:\n got %s\nwant %s", i, got, want)
			}
		}
	}
}
