// Package evals measures retrieval: it reads judged queries (a team's
// .kb/evals.yaml, or a BEIR dataset's queries and qrels), runs them
// against an artifact through package query, and scores the rankings as
// trec_eval does (nDCG@10, recall@10 and @100, MRR). It is apart from
// package query, which knows nothing of YAML or of metrics.
package evals

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Read reads a team's retrieval tests, a YAML list of queries with the
// documents each should find, named by topic or by repository path, and
// optionally graded:
//
//   - query: how do we roll back a deploy
//     expect: [deploy/rollback, .kb/deploy/steps.md]
//   - query: rate limits of the billing API
//     dir: services/billing          # ask from here (default: the root)
//     expect: {memories/004-rate-limits: 2, billing/api: 1}
func Read(r io.Reader) ([]Judgment, error) {
	var doc yaml.Node
	if err := yaml.NewDecoder(r).Decode(&doc); err != nil {
		if err == io.EOF {
			return nil, fmt.Errorf("no queries")
		}
		return nil, err
	}
	list := doc.Content[0]
	if list.Kind != yaml.SequenceNode {
		return nil, fmt.Errorf("line %d: want a list of queries (- query: ... expect: [...])", list.Line)
	}
	out := make([]Judgment, 0, len(list.Content))
	for i, item := range list.Content {
		if item.Kind != yaml.MappingNode {
			return nil, fmt.Errorf("line %d: want query: and expect: keys", item.Line)
		}
		var e struct {
			Query  string    `yaml:"query"`
			Dir    string    `yaml:"dir"`
			Expect yaml.Node `yaml:"expect"`
		}
		for k := 0; k+1 < len(item.Content); k += 2 {
			if key := item.Content[k]; !slices.Contains([]string{"query", "dir", "expect"}, key.Value) {
				return nil, fmt.Errorf("line %d: unknown key %q (want query, dir, expect)", key.Line, key.Value)
			}
		}
		if err := item.Decode(&e); err != nil {
			return nil, fmt.Errorf("line %d: %w", item.Line, err)
		}
		if strings.TrimSpace(e.Query) == "" {
			return nil, fmt.Errorf("line %d: the entry has no query", item.Line)
		}
		j := Judgment{ID: strconv.Itoa(i + 1), Query: e.Query, Dir: e.Dir, Relevant: map[string]int{}, Line: item.Line}
		switch e.Expect.Kind {
		case yaml.SequenceNode:
			var names []string
			if err := e.Expect.Decode(&names); err != nil {
				return nil, fmt.Errorf("line %d: expect: %w", e.Expect.Line, err)
			}
			for _, t := range names {
				j.Relevant[t] = 1
			}
		case yaml.MappingNode:
			if err := e.Expect.Decode(&j.Relevant); err != nil {
				return nil, fmt.Errorf("line %d: expect: grades must be integers: %w", e.Expect.Line, err)
			}
		default:
			line := cmp.Or(e.Expect.Line, item.Line)
			return nil, fmt.Errorf("line %d: expect must list topics or paths, or map them to grades", line)
		}
		out = append(out, j)
	}
	return out, nil
}
