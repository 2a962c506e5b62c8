package query

import (
	"math/rand/v2"
	"strconv"
	"testing"
)

// The most a query can score is the same sum, to the last bit, however
// the map of its terms is walked: the results' lexical shares divide by
// it, and two runs of a search must agree.
func TestIdealIsTheSameSum(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	ev := &eval{}
	for i := range 12 {
		ev.noteIDF("term"+strconv.Itoa(i), r.Float64()*10)
	}
	alternatives := [][]string{{"term0", "term1"}, {"term2"}}
	want := ev.ideal(alternatives)
	for range 200 {
		if got := ev.ideal(alternatives); got != want {
			t.Fatalf("ideal %v, then %v", want, got)
		}
	}
}
