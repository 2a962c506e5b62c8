package query

import (
	"fmt"
	"math"
)

// Relevance floors: a search says "nothing known" rather than hand out
// its nearest neighbours. A result is kept when it clears a floor of a
// channel that found it: its lexical share (Result.Lexical: its score by
// words over the most the query's words can score) or its similarity
// (Result.Similarity, the cosine of its vector and the query's, whose
// floor depends on the model). Request.Floor scales both; FloorOff turns
// them off. A hybrid search, which has both signals, answers at all only
// when its best result is a strong match by one channel or a fair match
// by both (answers). The defaults were chosen on the training data, and
// the figures are in docs/benchmarks.md ("Saying nothing is known").

// DefaultLexicalFloor is the least lexical share a result keeps.
const DefaultLexicalFloor = 0.15

// DefaultSimilarityFloor is the least similarity a result keeps, for a
// model SimilarityFloors does not name.
const DefaultSimilarityFloor = 0.30

// SimilarityFloors are the similarity floors of the models kbq knows.
var SimilarityFloors = map[string]float64{
	"all-MiniLM-L6-v2": 0.45,
}

// A hybrid search answers when a result has a lexical share of at least
// strongLexical, a similarity of at least the model's floor plus
// similarityMargin, or both a lexical share of fairLexical and a
// similarity of the floor less similarityMargin. A question nothing
// answers often matches a common word of the knowledge (a service's name)
// or lands near its topic, seldom both: the bar is where they part.
const (
	strongLexical    = 0.20
	fairLexical      = 0.10
	similarityMargin = 0.05
	// fairFeedback is the least share of the first result's words that
	// keeps a result of a hybrid search which answers: the second half of
	// an answer in two documents matches the first half, not the question.
	fairFeedback = 0.3
)

// FloorOff, as Request.Floor, keeps every result.
const FloorOff = -1

// similarityFloor is the floor of the model whose vectors ix holds (nil:
// the default).
func (ix *Index) similarityFloor() float64 {
	if ix == nil {
		return DefaultSimilarityFloor
	}
	if e := ix.Manifest.Embeddings; e != nil {
		if f, ok := SimilarityFloors[e.Model]; ok {
			return f
		}
	}
	return DefaultSimilarityFloor
}

// applyFloor leaves out of resp the results that clear no floor, scaled
// by floor (0 for 1, FloorOff for none), and says so when none is left.
// similarity is the model's floor. hybrid says both channels ranked:
// then nothing is kept unless the results answer, and when they do, the
// results that make a fair match by either channel are.
func applyFloor(resp *Response, floor, similarity float64, hybrid bool) {
	if floor < 0 || resp == nil || len(resp.Results) == 0 {
		return
	}
	if floor == 0 {
		floor = 1
	}
	kept := resp.Results[:0]
	lexical, feedback := DefaultLexicalFloor, math.Inf(1)
	if hybrid {
		if !answers(resp.Results, floor, similarity) {
			lexical, similarity = math.Inf(1), math.Inf(1)
		} else {
			lexical, similarity, feedback = fairLexical, similarity-similarityMargin, fairFeedback
		}
	}
	for _, r := range resp.Results {
		if r.Lexical >= lexical*floor || r.Similarity > 0 && r.Similarity >= similarity*floor || r.feedback >= feedback*floor {
			kept = append(kept, r)
		}
	}
	if dropped := len(resp.Results) - len(kept); len(kept) == 0 {
		resp.Notes = append(resp.Notes, fmt.Sprintf("no knowledge matches well enough: %d weaker %s left out (--min-score 0 shows %s)",
			dropped, plural(dropped, "result", "results"), plural(dropped, "it", "them")))
	}
	resp.Results = kept
}

// answers reports whether one of results clears the bar of a hybrid
// search (strongLexical), scaled by floor.
func answers(results []Result, floor, similarity float64) bool {
	for _, r := range results {
		switch {
		case r.Lexical >= strongLexical*floor,
			r.Similarity >= (similarity+similarityMargin)*floor,
			r.Lexical >= fairLexical*floor && r.Similarity >= (similarity-similarityMargin)*floor:
			return true
		}
	}
	return false
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// floorOf is the floor a search of ix applies: the request's, else the
// artifact's configured min_score, else the default.
func (ix *Index) floorOf(req Request) float64 {
	if req.Floor != 0 {
		return req.Floor
	}
	if f := ix.Manifest.Config.MinScore; f != nil {
		if *f == 0 {
			return FloorOff
		}
		return *f
	}
	return 0
}
