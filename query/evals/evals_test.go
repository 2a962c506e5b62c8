package evals_test

import (
	"strings"
	"testing"

	"github.com/kbqdev/kbq/query/evals"
)

func TestReadEvals(t *testing.T) {
	js, err := evals.Read(strings.NewReader(`
- query: how do we roll back
  expect: [deploy/rollback, .kb/deploy/steps.md]
- query: api rate limits
  dir: services/api
  expect: {memories/004-limits: 2, api/overview: 1}
`))
	if err != nil || len(js) != 2 {
		t.Fatalf("%v %v", js, err)
	}
	if js[0].Relevant["deploy/rollback"] != 1 || js[0].Relevant[".kb/deploy/steps.md"] != 1 || len(js[0].Relevant) != 2 {
		t.Errorf("list expectations: %v", js[0].Relevant)
	}
	if js[1].Dir != "services/api" || js[1].Relevant["memories/004-limits"] != 2 {
		t.Errorf("mapped expectations: %+v", js[1])
	}
	for bad, line := range map[string]string{
		"- expect: [a]\n":                   "line 1:",
		"- query: q\n  expect: topic\n":     "line 2:",
		"query: not a list\n":               "line 1:",
		"- query: q\n  expected: [a]\n":     "line 2: unknown key",
		"- query: q\n  expect: {a: high}\n": "line 2:",
		"":                                  "no queries",
	} {
		if _, err := evals.Read(strings.NewReader(bad)); err == nil || !strings.Contains(err.Error(), line) {
			t.Errorf("%q: error %v, want %q", bad, err, line)
		}
	}
}
