package evals_test

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/kbqdev/kbq/internal/querytest"
	"github.com/kbqdev/kbq/internal/testkb"
	"github.com/kbqdev/kbq/query"
	"github.com/kbqdev/kbq/query/evals"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestScore(t *testing.T) {
	// Relevant: a (grade 2), b (1), c (1); d judged not relevant.
	rel := map[string]int{"a": 2, "b": 1, "c": 1, "d": 0}
	s := evals.Score([]string{"x", "b", "d", "a"}, rel)
	dcg := 1/math.Log2(3) + 2/math.Log2(5)
	idcg := 2/math.Log2(2) + 1/math.Log2(3) + 1/math.Log2(4)
	if !near(s.NDCG10, dcg/idcg) || !near(s.Recall10, 2.0/3) || !near(s.RR, 0.5) || s.Relevant != 3 {
		t.Errorf("score = %+v, want ndcg %.4f recall 0.667 rr 0.5", s, dcg/idcg)
	}
	perfect := evals.Score([]string{"a", "b", "c"}, rel)
	if !near(perfect.NDCG10, 1) || !near(perfect.RR, 1) || !near(perfect.Recall100, 1) {
		t.Errorf("perfect ranking: %+v", perfect)
	}
	// Beyond 10, a hit counts for recall@100 only.
	long := make([]string, 50)
	for i := range long {
		long[i] = fmt.Sprint("n", i)
	}
	long[20] = "a"
	s = evals.Score(long, rel)
	if s.NDCG10 != 0 || s.Recall10 != 0 || !near(s.Recall100, 1.0/3) || !near(s.RR, 1.0/21) {
		t.Errorf("hit at 21: %+v", s)
	}
	// A document found twice takes one rank.
	if s := evals.Score([]string{"a", "a", "b", "c"}, rel); !near(s.NDCG10, 1) {
		t.Errorf("duplicate hit: %+v", s)
	}
	if s := evals.Score([]string{"a"}, map[string]int{"a": 0}); s.Relevant != 0 || s.NDCG10 != 0 {
		t.Errorf("no positive judgment: %+v", s)
	}
}

func TestReadBEIRAndEvaluate(t *testing.T) {
	ix := querytest.Open(t, testkb.Files{
		".kb/corpus/d1.md": "---\ntitle: Vitamin D and bones\n---\nVitamin D improves bone density in adults.\n",
		".kb/corpus/d2.md": "---\ntitle: Coffee\n---\nCoffee consumption and sleep quality.\n",
		".kb/corpus/d3.md": "---\ntitle: Exercise\n---\nExercise improves sleep and bone health.\n",
	})
	js, err := evals.ReadBEIR(
		strings.NewReader(`{"_id": "1", "text": "vitamin D bone density"}`+"\n"+`{"_id": "2", "text": "sleep quality"}`+"\n"+`{"_id": "9", "text": "unjudged"}`),
		strings.NewReader("query-id\tcorpus-id\tscore\n1\td1\t1\n2\td2\t2\n2\td3\t1\n"))
	if err != nil || len(js) != 2 {
		t.Fatalf("judgments %v, %v", js, err)
	}
	res, err := evals.Run(context.Background(), ix, js, evals.Options{DocID: "stem", Floor: query.FloorOff})
	if err != nil {
		t.Fatal(err)
	}
	if res.Queries != 2 || !near(res.PerQuery[0].NDCG10, 1) || res.Recall100 != 1 || res.MRR != 1 {
		t.Errorf("result %+v", res)
	}
	if _, err := evals.ReadBEIR(strings.NewReader(""), strings.NewReader("1 d1\n")); err == nil {
		t.Error("malformed qrels accepted")
	}
}

func TestCheckNames(t *testing.T) {
	ix := querytest.Open(t, testkb.Files{
		".kb/deploy/rollback.md": "Roll back with make rollback.\n",
	})
	js, err := evals.Read(strings.NewReader("- query: roll back\n  expect: [deploy/rollback, .kb/deploy/rollback.md]\n- query: x\n  expect: [deploy/rolback]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := evals.CheckNames(ix, js[:1]); err != nil {
		t.Errorf("topic and path rejected: %v", err)
	}
	if err := evals.CheckNames(ix, js); err == nil || !strings.Contains(err.Error(), `line 3: expect names "deploy/rolback"`) {
		t.Errorf("typo: error %v", err)
	}
}
