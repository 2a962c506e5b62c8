package membench

import (
	"fmt"
	"io"
	"math"
	"slices"
	"text/tabwriter"
)

// A Searcher answers a question of a project: the paths of its results,
// best first (none: "nothing known").
type Searcher func(project, question string) ([]string, error)

// Scores are the metrics of a set of questions.
type Scores struct {
	Questions int
	// Strict is the share answered right: an answerable question with all
	// its required sources in the top 10 and no harmful one there; an
	// unanswerable one with no result.
	Strict float64
	// MRR is the mean reciprocal rank of the first required source, over
	// answerable questions.
	MRR float64
	// NDCG5 is nDCG@5 with the questions' grades, over answerable ones.
	NDCG5 float64
	// Recall10 is the share of required sources in the top 10, over
	// answerable questions.
	Recall10 float64
	// AllIn5 is the share of answerable questions with every required
	// source in the top 5.
	AllIn5 float64
	// Stale is the share of results, in the top 10 of every question,
	// that the question marks harmful.
	Stale float64
	// Abstention is the share of unanswerable questions with no result.
	Abstention float64
}

// A Report is the scores of every question and of each category.
type Report struct {
	All        Scores
	ByCategory map[string]Scores
}

// Evaluate asks every question of search and scores the answers.
func Evaluate(questions []Question, search Searcher) (*Report, error) {
	type answered struct {
		q       Question
		results []string
	}
	var all []answered
	for _, q := range questions {
		res, err := search(q.Project, q.Text)
		if err != nil {
			return nil, fmt.Errorf("%s %q: %w", q.ID, q.Text, err)
		}
		all = append(all, answered{q, res[:min(10, len(res))]})
	}
	score := func(set []answered) Scores {
		var s Scores
		var answerable, unanswerable, returned, stale int
		for _, a := range set {
			s.Questions++
			returned += len(a.results)
			for _, r := range a.results {
				if slices.Contains(a.q.Harmful, r) {
					stale++
				}
			}
			if len(a.q.Required) == 0 {
				unanswerable++
				if len(a.results) == 0 {
					s.Strict++
					s.Abstention++
				}
				continue
			}
			answerable++
			found, in5, first := 0, 0, 0
			for _, req := range a.q.Required {
				if i := slices.Index(a.results, req); i >= 0 {
					found++
					if i < 5 {
						in5++
					}
					if first == 0 || i+1 < first {
						first = i + 1
					}
				}
			}
			harmful := slices.ContainsFunc(a.results, func(r string) bool { return slices.Contains(a.q.Harmful, r) })
			if found == len(a.q.Required) && !harmful {
				s.Strict++
			}
			if first > 0 {
				s.MRR += 1 / float64(first)
			}
			s.Recall10 += float64(found) / float64(len(a.q.Required))
			if in5 == len(a.q.Required) {
				s.AllIn5++
			}
			s.NDCG5 += ndcg(a.results, a.q.Grades, 5)
		}
		if s.Questions > 0 {
			s.Strict /= float64(s.Questions)
		}
		if answerable > 0 {
			s.MRR /= float64(answerable)
			s.Recall10 /= float64(answerable)
			s.AllIn5 /= float64(answerable)
			s.NDCG5 /= float64(answerable)
		}
		if unanswerable > 0 {
			s.Abstention /= float64(unanswerable)
		} else {
			s.Abstention = math.NaN()
		}
		if returned > 0 {
			s.Stale = float64(stale) / float64(returned)
		}
		return s
	}
	r := &Report{All: score(all), ByCategory: map[string]Scores{}}
	for _, c := range Categories {
		var set []answered
		for _, a := range all {
			if a.q.Category == c {
				set = append(set, a)
			}
		}
		if len(set) > 0 {
			r.ByCategory[c] = score(set)
		}
	}
	return r, nil
}

func ndcg(results []string, grades map[string]int, k int) float64 {
	var dcg float64
	for i, r := range results[:min(k, len(results))] {
		dcg += (math.Pow(2, float64(grades[r])) - 1) / math.Log2(float64(i+2))
	}
	var ideal []int
	for _, g := range grades {
		ideal = append(ideal, g)
	}
	slices.Sort(ideal)
	slices.Reverse(ideal)
	var idcg float64
	for i, g := range ideal[:min(k, len(ideal))] {
		idcg += (math.Pow(2, float64(g)) - 1) / math.Log2(float64(i+2))
	}
	if idcg == 0 {
		return 0
	}
	return dcg / idcg
}

// Write prints the report as a table: a row per category, and all.
func (r *Report) Write(w io.Writer, mode string) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%s\tquestions\tstrict\tMRR\tnDCG@5\trecall@10\tall in 5\tstale\tabstention\t\n", mode)
	row := func(name string, s Scores) {
		abst := "-"
		if !math.IsNaN(s.Abstention) {
			abst = fmt.Sprintf("%.2f", s.Abstention)
		}
		fmt.Fprintf(tw, "%s\t%d\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.4f\t%s\t\n", name, s.Questions, s.Strict, s.MRR, s.NDCG5, s.Recall10, s.AllIn5, s.Stale, abst)
	}
	for _, c := range Categories {
		if s, ok := r.ByCategory[c]; ok {
			row(c, s)
		}
	}
	row("all", r.All)
	return tw.Flush()
}
