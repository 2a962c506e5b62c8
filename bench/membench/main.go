// Command membench runs kbq's agent-memory benchmark (internal/membench):
// it generates the projects' histories from -seed, compiles each into an
// artifact, asks every question in the modes of -modes and prints the
// metrics per category. Semantic and hybrid modes embed with the local
// model in -model (an all-MiniLM-L6-v2 directory), built and queried as
// kbc and kbq do.
//
//	go run ./bench/membench -model ~/.cache/kbq-ci/models/all-MiniLM-L6-v2
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kbqdev/kbq/embedding"
	"github.com/kbqdev/kbq/internal/membench"
	"github.com/kbqdev/kbq/query"
)

func main() {
	seed := flag.Uint64("seed", 48, "the generator's seed")
	projects := flag.Int("projects", 5, "projects")
	per := flag.Int("questions", 40, "questions a project")
	model := flag.String("model", os.Getenv("KBQ_TEST_MODEL"), "the model `DIR` for semantic and hybrid modes (default $KBQ_TEST_MODEL)")
	modes := flag.String("modes", "lexical,semantic,hybrid", "the modes to run, comma-separated")
	dump := flag.String("dump", "", "write the projects' files under `DIR` too")
	flag.Float64Var(&weight, "weight", 0, "the hybrid fusion's semantic weight (0: the default)")
	flag.Float64Var(&diversity, "diversity", 0, "the rankings by meaning's diversity (maximal marginal relevance), as kbq eval --diversity")
	flag.Float64Var(&minScore, "min-score", 1, "scale the relevance floors (0: off), as kbq search --min-score")
	flag.BoolVar(&calibrate, "calibrate", false, "print the relevance of the answers and of the best results of unanswerable questions, for the floors")
	flag.Parse()
	if err := run(*seed, *projects, *per, *model, strings.Split(*modes, ","), *dump); err != nil {
		fmt.Fprintln(os.Stderr, "membench:", err)
		os.Exit(1)
	}
}

var (
	calibrate bool
	diversity float64
	minScore  float64
	weight    float64
)

func run(seed uint64, projects, per int, model string, modes []string, dump string) error {
	ctx := context.Background()
	b := membench.Generate(seed, projects, per)
	var enc *embedding.Encoder
	if model != "" {
		var err error
		if enc, err = embedding.Load(model); err != nil {
			return err
		}
	}
	tmp, err := os.MkdirTemp("", "membench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	memories := 0
	for _, p := range b.Projects {
		for path, text := range p.Files {
			if strings.Contains(path, "/memories/") {
				memories++
			}
			if dump != "" {
				full := filepath.Join(dump, p.Name, path)
				os.MkdirAll(filepath.Dir(full), 0o755)
				os.WriteFile(full, []byte(text), 0o644)
			}
		}
	}
	ranking := query.DefaultRanking()
	if weight > 0 {
		ranking.SemanticWeight = weight
	}
	ranking.Diversity = diversity
	indexes, err := membench.Build(ctx, b, tmp, enc, ranking)
	if err != nil {
		return err
	}
	defer func() {
		for _, ix := range indexes {
			ix.Close()
		}
	}()
	fmt.Printf("%d projects, %d memories, %d questions (seed %d)\n\n", len(b.Projects), memories, len(b.Questions), seed)
	for _, mode := range modes {
		if mode != query.ModeLexical && enc == nil {
			fmt.Printf("%s: no model (-model DIR): not run\n\n", mode)
			continue
		}
		floor := minScore
		if minScore == 0 {
			floor = query.FloorOff
		}
		search := membench.Search(ctx, indexes, enc, mode, floor)
		if calibrate {
			printRelevance(ctx, b, indexes, enc, mode)
		}
		r, err := membench.Evaluate(b.Questions, search)
		if err != nil {
			return err
		}
		if err := r.Write(os.Stdout, mode); err != nil {
			return err
		}
		fmt.Println()
	}
	return nil
}

// printRelevance prints the percentiles of the lexical share and the
// similarity of the first result that answers each answerable question,
// and of the first result of each unanswerable one.
func printRelevance(ctx context.Context, b *membench.Bench, indexes map[string]*query.Index, enc *embedding.Encoder, mode string) {
	var lexA, simA, lexU, simU []float64
	for _, q := range b.Questions {
		req := query.Request{Query: q.Text, N: 10, Mode: mode, Floor: query.FloorOff}
		if mode != query.ModeLexical {
			v, _ := enc.Embed(ctx, []string{q.Text})
			req.Vector = v[0]
		}
		resp, err := indexes[q.Project].Search(ctx, req)
		if err != nil || len(resp.Results) == 0 {
			continue
		}
		if len(q.Required) == 0 {
			lexU, simU = append(lexU, resp.Results[0].Lexical), append(simU, resp.Results[0].Similarity)
			continue
		}
		for _, r := range resp.Results {
			if slices.Contains(q.Required, r.Path) {
				lexA, simA = append(lexA, r.Lexical), append(simA, r.Similarity)
				break
			}
		}
	}
	pct := func(xs []float64) string {
		if len(xs) == 0 {
			return "-"
		}
		slices.Sort(xs)
		at := func(p float64) float64 { return xs[int(p*float64(len(xs)-1))] }
		return fmt.Sprintf("min %.3f p10 %.3f p50 %.3f p90 %.3f max %.3f", at(0), at(0.1), at(0.5), at(0.9), at(1))
	}
	fmt.Printf("%s relevance, answers: lexical %s\n                     similarity %s\n", mode, pct(lexA), pct(simA))
	fmt.Printf("%s relevance, unanswerable best: lexical %s\n                                similarity %s\n", mode, pct(lexU), pct(simU))
}
