package query

import "fmt"

// Relevance floors: a search says "nothing known" rather than hand out
// its nearest neighbours. A result is kept when it clears a floor of a
// channel that found it: its lexical share (Result.Lexical: its score by
// words over the most the query's words can score) or its similarity
// (Result.Similarity, the cosine of its vector and the query's, whose
// floor depends on the model). Request.Floor scales both; FloorOff turns
// them off. The defaults were chosen on the training data, and the
// figures are in docs/benchmarks.md ("Saying nothing is known").

// DefaultLexicalFloor is the least lexical share a result keeps.
const DefaultLexicalFloor = 0.15

// DefaultSimilarityFloor is the least similarity a result keeps, for a
// model SimilarityFloors does not name.
const DefaultSimilarityFloor = 0.30

// SimilarityFloors are the similarity floors of the models kbq knows.
var SimilarityFloors = map[string]float64{
	"all-MiniLM-L6-v2": 0.45,
}

// FloorOff, as Request.Floor, keeps every result.
const FloorOff = -1

// similarityFloor is the floor of the model whose vectors ix holds.
func (ix *Index) similarityFloor() float64 {
	if e := ix.Manifest.Embeddings; e != nil {
		if f, ok := SimilarityFloors[e.Model]; ok {
			return f
		}
	}
	return DefaultSimilarityFloor
}

// applyFloor leaves out of resp the results that clear no floor, scaled
// by floor (0 for 1, FloorOff for none), and says so when none is left.
func applyFloor(resp *Response, floor, similarity float64) {
	if floor < 0 || resp == nil || len(resp.Results) == 0 {
		return
	}
	if floor == 0 {
		floor = 1
	}
	kept := resp.Results[:0]
	for _, r := range resp.Results {
		if r.Lexical >= DefaultLexicalFloor*floor || r.Similarity > 0 && r.Similarity >= similarity*floor {
			kept = append(kept, r)
		}
	}
	if dropped := len(resp.Results) - len(kept); len(kept) == 0 {
		resp.Notes = append(resp.Notes, fmt.Sprintf("no knowledge matches well enough: %d weaker %s left out (--min-score 0 shows %s)",
			dropped, plural(dropped, "result", "results"), plural(dropped, "it", "them")))
	}
	resp.Results = kept
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
