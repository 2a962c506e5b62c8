package querytest

import (
	"context"
	"strings"

	"github.com/kbqdev/kbq/artifact"
)

// LetterDims is the length of Letters' vectors: not a multiple of 64, so
// that the vectors' bit rows end inside a word.
const LetterDims = 40

// LetterVector embeds text as the counts of its letters.
func LetterVector(text string) []float32 {
	v := make([]float32, LetterDims)
	v[0] = 0.01
	for _, r := range strings.ToLower(text) {
		if r >= 'a' && r <= 'z' {
			v[1+int(r-'a')]++
		}
	}
	return v
}

// Letters is an embedder of LetterVector for builds. With URL set, its
// identity names that OpenAI-compatible endpoint, which a reader asks for
// the query's vector.
type Letters struct{ URL string }

func (l Letters) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = LetterVector(t)
	}
	return out, nil
}

func (l Letters) Identity() artifact.Embeddings {
	if l.URL != "" {
		return artifact.Embeddings{Provider: "openai", Model: "letters", URL: l.URL, Dims: LetterDims}
	}
	return artifact.Embeddings{Provider: "test", Model: "letters", Hash: "0", Dims: LetterDims}
}
