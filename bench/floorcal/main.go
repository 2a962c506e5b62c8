// Command floorcal calibrates the relevance floors on a BEIR benchmark's
// judged queries: asked of the artifact of their own corpus (-answers),
// the documents judged relevant show what answers score; asked of
// artifacts of corpora that answer none of them (-wrong, comma-separated),
// the best results show what a question nothing answers scores. It prints
// both as percentiles of the lexical share and the similarity, and the
// share of each kept by the floors of -min-score (as kbq search), searched
// with the floors off and the floors applied here, in -mode.
//
//	go run ./bench/floorcal -model ~/.cache/kbq-ci/models/all-MiniLM-L6-v2 \
//	    -queries ../shared/datasets/scifact/queries.jsonl \
//	    -qrels ../shared/datasets/scifact/qrels/train.tsv \
//	    -answers /tmp/sf/.kbq -wrong /tmp/hugo/.kbq
//
// -pairs prints every result instead: corpus, query, rank, judged
// relevant, lexical share, similarity, tab-separated.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/kbqdev/kbq/embedding"
	"github.com/kbqdev/kbq/query"
	"github.com/kbqdev/kbq/query/evals"
)

func main() {
	model := flag.String("model", os.Getenv("KBQ_TEST_MODEL"), "the model `DIR` the artifacts were embedded with")
	queries := flag.String("queries", "", "the BEIR queries (`FILE`.jsonl)")
	qrels := flag.String("qrels", "", "the BEIR judgments (`FILE`.tsv); only judged queries are asked")
	answers := flag.String("answers", "", "the artifact `DIR` of the queries' own corpus")
	wrong := flag.String("wrong", "", "artifact `DIRS` (comma-separated) of corpora that answer none of the queries")
	mode := flag.String("mode", query.ModeHybrid, "the search mode")
	minScore := flag.Float64("min-score", 1, "scale the floors, as kbq search --min-score")
	pairs := flag.Bool("pairs", false, "print every result's relevance instead of the summary")
	flag.Parse()
	if *queries == "" || *qrels == "" || *answers == "" {
		fmt.Fprintln(os.Stderr, "floorcal: -queries, -qrels and -answers are required (see -help)")
		os.Exit(2)
	}
	if err := run(*model, *queries, *qrels, *answers, *wrong, *mode, *minScore, *pairs); err != nil {
		fmt.Fprintln(os.Stderr, "floorcal:", err)
		os.Exit(1)
	}
}

// relevance is a result's lexical share and similarity, and whether the
// floors keep it.
type relevance struct {
	lexical, similarity float64
	kept                bool
}

func run(model, queriesPath, qrelsPath, answers, wrong, mode string, minScore float64, pairs bool) error {
	ctx := context.Background()
	qf, err := os.Open(queriesPath)
	if err != nil {
		return err
	}
	defer qf.Close()
	rf, err := os.Open(qrelsPath)
	if err != nil {
		return err
	}
	defer rf.Close()
	judged, err := evals.ReadBEIR(qf, rf)
	if err != nil {
		return err
	}
	var vectors [][]float32
	if mode != query.ModeLexical {
		if model == "" {
			return fmt.Errorf("mode %s needs -model DIR", mode)
		}
		enc, err := embedding.Load(model)
		if err != nil {
			return err
		}
		texts := make([]string, len(judged))
		for i, j := range judged {
			texts[i] = j.Query
		}
		if vectors, err = enc.Embed(ctx, texts); err != nil {
			return err
		}
	}
	// ask runs every query on dir and calls see with each result.
	ask := func(dir string, see func(j evals.Judgment, rank int, r query.Result, rel relevance)) error {
		ix, err := query.Open(dir)
		if err != nil {
			return err
		}
		defer ix.Close()
		for i, j := range judged {
			req := query.Request{Query: j.Query, N: 10, Mode: mode, Floor: query.FloorOff, AllScopes: true}
			if vectors != nil {
				req.Vector = vectors[i]
			}
			resp, err := ix.Search(ctx, req)
			if err != nil {
				return fmt.Errorf("%s: query %s: %w", dir, j.ID, err)
			}
			floored := req
			floored.Floor = minScore
			if minScore == 0 {
				floored.Floor = query.FloorOff
			}
			kept, err := ix.Search(ctx, floored)
			if err != nil {
				return err
			}
			for rank, r := range resp.Results {
				keep := slices.ContainsFunc(kept.Results, func(k query.Result) bool { return k.Path == r.Path })
				see(j, rank, r, relevance{r.Lexical, r.Similarity, keep})
			}
		}
		return nil
	}
	stem := func(path string) string {
		base := path[strings.LastIndex(path, "/")+1:]
		return strings.TrimSuffix(base, ".md")
	}
	var found []relevance
	if err := ask(answers, func(j evals.Judgment, rank int, r query.Result, rel relevance) {
		relevant := j.Relevant[stem(r.Path)] > 0
		if pairs {
			fmt.Printf("answers\t%s\t%d\t%v\t%.4f\t%.4f\n", j.ID, rank, relevant, rel.lexical, rel.similarity)
		}
		if relevant {
			found = append(found, rel)
		}
	}); err != nil {
		return err
	}
	best := map[string]relevance{} // a query's best result over the wrong corpora
	abstained := map[string]bool{}
	var wrongs []string
	if wrong != "" {
		wrongs = strings.Split(wrong, ",")
	}
	for _, dir := range wrongs {
		if err := ask(dir, func(j evals.Judgment, rank int, r query.Result, rel relevance) {
			if pairs {
				fmt.Printf("%s\t%s\t%d\tfalse\t%.4f\t%.4f\n", dir, j.ID, rank, rel.lexical, rel.similarity)
			}
			key := dir + "\x00" + j.ID
			b := best[key]
			b.lexical, b.similarity = max(b.lexical, rel.lexical), max(b.similarity, rel.similarity)
			b.kept = b.kept || rel.kept
			best[key] = b
		}); err != nil {
			return err
		}
		for _, j := range judged {
			abstained[dir+"\x00"+j.ID] = !best[dir+"\x00"+j.ID].kept
		}
	}
	if pairs {
		return nil
	}
	fmt.Printf("%d judged queries, mode %s, floors ×%g\n", len(judged), mode, minScore)
	fmt.Printf("answers in the top 10:          %s\n", summary(found))
	var bests []relevance
	for _, b := range best {
		bests = append(bests, b)
	}
	if len(bests) > 0 {
		n := 0
		for _, a := range abstained {
			if a {
				n++
			}
		}
		fmt.Printf("best of a question none answers: %s\n", summary(bests))
		fmt.Printf("abstention on the wrong corpora: %.3f (%d of %d)\n", float64(n)/float64(len(abstained)), n, len(abstained))
	}
	return nil
}

// summary gives the percentiles of rs's lexical shares and similarities
// and the share of them the floors keep.
func summary(rs []relevance) string {
	if len(rs) == 0 {
		return "none"
	}
	pct := func(get func(relevance) float64) string {
		xs := make([]float64, len(rs))
		for i, r := range rs {
			xs[i] = get(r)
		}
		slices.Sort(xs)
		at := func(p float64) float64 { return xs[int(p*float64(len(xs)-1))] }
		return fmt.Sprintf("p10 %.3f p50 %.3f p90 %.3f max %.3f", at(0.1), at(0.5), at(0.9), at(1))
	}
	kept := 0
	for _, r := range rs {
		if r.kept {
			kept++
		}
	}
	return fmt.Sprintf("%d, kept %.3f; lexical %s; similarity %s", len(rs), float64(kept)/float64(len(rs)),
		pct(func(r relevance) float64 { return r.lexical }), pct(func(r relevance) float64 { return r.similarity }))
}
