package kbqcli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kbqdev/kbq/artifact"
	"github.com/kbqdev/kbq/internal/cli"
	"github.com/kbqdev/kbq/internal/door/online"
	"github.com/kbqdev/kbq/internal/door/reader"
	"github.com/kbqdev/kbq/internal/door/render"
	"github.com/kbqdev/kbq/query"
	"github.com/kbqdev/kbq/query/evals"
)

type evalOptions struct {
	index     string
	beir      bool
	docID     string
	minNDCG   float64
	json      bool
	worst     int
	k1, b     float64
	mode      string
	fusion    string
	weight    float64
	recency   string
	minScore  float64
	rweight   float64
	diversity float64
}

func newEvalCommand(s *cli.Streams) *cli.Command {
	o := &evalOptions{}
	return &cli.Command{
		Name:      "eval",
		Usage:     "measure retrieval quality against judged queries",
		UsageText: "kbq eval [EVALS.yaml | --beir QUERIES.jsonl QRELS.tsv] [--min-ndcg X] [--json]",
		Description: `Runs judged queries against the artifact and reports nDCG@10, recall@10,
recall@100 and MRR, as trec_eval defines them (graded relevance).

A team keeps its own retrieval tests in .kb/evals.yaml (the default file):

   - query: how do we roll back a deploy
     expect: [deploy/rollback]             # topics or paths
   - query: billing rate limits
     dir: services/billing                 # ask from here (default: the root)
     expect: {memories/004-rate-limits: 2, billing/api: 1}

and checks them in CI with --min-ndcg, which exits 1 below the bar. With
--beir it reads a BEIR benchmark: queries as JSON lines (_id, text) and
qrels as TSV (query-id, corpus-id, score), matching corpus ids to file
names (--doc-id stem).

--k1, --b and --boost FIELD=X override the ranking parameters, to tune
them by measurement.

` + reader.ExitCodesHelp + `
   (1 also when nDCG@10 is below --min-ndcg)`,
		Flags: []cli.Flag{
			reader.IndexFlag(&o.index),
			&cli.BoolFlag{Name: "beir", Usage: "read a BEIR benchmark: QUERIES.jsonl QRELS.tsv", Destination: &o.beir},
			&cli.StringFlag{Name: "doc-id", Usage: "match judgments by `KIND`: stem (file name), topic or path (default: stem with --beir, topic or path otherwise)", Destination: &o.docID},
			&cli.FloatFlag{Name: "min-ndcg", Usage: "exit 1 when nDCG@10 is below `X`", Destination: &o.minNDCG},
			&cli.IntFlag{Name: "worst", Usage: "list the `N` queries with the lowest nDCG@10", Value: 5, Destination: &o.worst},
			&cli.BoolFlag{Name: "json", Usage: "print JSON", Destination: &o.json},
			&cli.FloatFlag{Name: "k1", Usage: "BM25 term saturation `K1`", Value: query.DefaultK1, Destination: &o.k1},
			&cli.FloatFlag{Name: "b", Usage: "BM25 length normalization `B`", Value: query.DefaultB, Destination: &o.b},
			&cli.StringSliceFlag{Name: "boost", Usage: "weigh `FIELD=X` (title, heading, tags or body) X times (repeatable)"},
			&cli.StringFlag{Name: "fusion", Usage: "fuse hybrid rankings by `WAY`: rrf (reciprocal rank) or convex (scaled scores)", Value: query.DefaultFusion, Destination: &o.fusion},
			&cli.FloatFlag{Name: "semantic-weight", Usage: "give the semantic ranking `W` (0 to 1) of a hybrid score", Value: query.DefaultSemanticWeight, Destination: &o.weight},
			&cli.StringFlag{Name: "mode", Complete: cli.Values(query.Modes...), Usage: "search in `MODE`: hybrid, lexical or semantic (default: hybrid when the artifact has vectors)", Destination: &o.mode},
			&cli.StringFlag{Name: "recency", Usage: "rank recently changed documents higher, with a half-life of `AGE` (90d, 12w, 6m, 1y), as kbq search --recency", Destination: &o.recency},
			&cli.FloatFlag{Name: "min-score", Usage: "scale the relevance floors by `F`, as kbq search --min-score (1: the default; 0 keeps every result)", Value: 1, Destination: &o.minScore},
			&cli.FloatFlag{Name: "diversity", Usage: "count a result's likeness to those above it against it by the share `D` (0 to 1) in the rankings by meaning (maximal marginal relevance; 0, the default, is off)", Destination: &o.diversity},
			&cli.FloatFlag{Name: "recency-weight", Usage: "the share `W` (0 to 1) of a score the recency prior moves", Value: query.DefaultRecencyWeight, Destination: &o.rweight},
		},
		Action: func(c *cli.Context) error { return runEval(c, s, o) },
	}
}

func runEval(c *cli.Context, s *cli.Streams, o *evalOptions) error {
	ranking := query.Ranking{K1: o.k1, B: o.b, Boosts: maps.Clone(query.DefaultBoosts), Fusion: o.fusion, SemanticWeight: o.weight, RecencyWeight: o.rweight, Diversity: o.diversity}
	if o.fusion != query.FusionRRF && o.fusion != query.FusionConvex || o.weight <= 0 || o.weight > 1 {
		return cli.Usagef("--fusion %q --semantic-weight %g: want rrf or convex, and a weight above 0 and at most 1", o.fusion, o.weight)
	}
	if o.diversity < 0 || o.diversity > 1 {
		return cli.Usagef("--diversity %g: want a share from 0 to 1", o.diversity)
	}
	if o.rweight <= 0 || o.rweight > 1 {
		return cli.Usagef("--recency-weight %g: want a weight above 0 and at most 1", o.rweight)
	}
	var recency time.Duration
	if o.recency != "" {
		var err error
		if recency, err = query.ParseHalfLife(o.recency); err != nil {
			return cli.Usagef("--%v", err)
		}
	}
	for _, kv := range c.StringSlice("boost") {
		field, value, ok := strings.Cut(kv, "=")
		x, err := strconv.ParseFloat(value, 64)
		if !ok || err != nil || !slices.Contains(artifact.TextFields, field) {
			return cli.Usagef("--boost %q: want FIELD=X with FIELD one of %s", kv, strings.Join(artifact.TextFields, ", "))
		}
		ranking.Boosts[field] = x
	}
	cwd, err := os.Getwd()
	if err != nil {
		return err
	}
	dir, root, err := query.Locate(o.index, s.Getenv("KBQ_INDEX"), cwd)
	if err != nil {
		return err
	}
	ix, err := query.OpenWith(dir, ranking)
	if err != nil {
		return reader.ExplainOpenError(dir, err)
	}
	defer ix.Close()
	judgments, name, err := readJudgments(c, o, root)
	if err != nil {
		return err
	}
	if !o.beir && o.docID == "" {
		if err := evals.CheckNames(ix, judgments); err != nil {
			return cli.Usagef("%s: %v", name, err)
		}
	}
	if o.docID == "" && o.beir {
		o.docID = "stem"
	}
	if o.mode != "" && !slices.Contains(query.Modes, o.mode) {
		return cli.Usagef("--mode %q: want %s", o.mode, strings.Join(query.Modes, ", "))
	}
	// An evaluation measures the mode it names: a semantic channel that
	// cannot run is an error, not a quiet fall back to lexical.
	embedder := online.QueryEmbedder(s)
	embedder.Warn = nil
	vectorize := func(ctx context.Context, req *query.Request) error {
		return embedder.Vectorize(ctx, ix, req)
	}
	progress := cli.NewProgress(s, "evaluating")
	res, err := evals.Run(c.Context, ix, judgments, evals.Options{DocID: o.docID, Progress: progress.Update, Mode: o.mode, Vectorize: vectorize, Recency: recency, Floor: floorOf(o.minScore)})
	progress.Done()
	if err != nil {
		return err
	}
	if res.Queries == 0 {
		return cli.Usagef("no query has a relevant document to find")
	}
	if o.json {
		err = render.JSON(s.Out, res)
	} else {
		err = writeEval(s.Out, res, o.worst)
	}
	if err != nil {
		return err
	}
	if c.IsSet("min-ndcg") && res.NDCG10 < o.minNDCG {
		fmt.Fprintf(s.Err, "kbq: nDCG@10 %.4f is below --min-ndcg %.4f\n", res.NDCG10, o.minNDCG)
		return cli.ErrFailure
	}
	return nil
}

// readJudgments reads the queries to evaluate, and names their file.
func readJudgments(c *cli.Context, o *evalOptions, root string) ([]evals.Judgment, string, error) {
	args := c.Args().Slice()
	if o.beir {
		if len(args) != 2 {
			return nil, "", cli.Usagef("--beir takes two files: QUERIES.jsonl QRELS.tsv")
		}
		queries, err := os.Open(args[0])
		if err != nil {
			return nil, "", err
		}
		defer queries.Close()
		qrels, err := os.Open(args[1])
		if err != nil {
			return nil, "", err
		}
		defer qrels.Close()
		js, err := evals.ReadBEIR(queries, qrels)
		if err != nil {
			return nil, "", cli.Usagef("%v", err)
		}
		return js, args[0], nil
	}
	var name string
	switch {
	case len(args) == 1:
		name = args[0]
	case len(args) > 1:
		return nil, "", cli.Usagef("kbq eval takes one evals file (or --beir QUERIES QRELS)")
	case root != "":
		name = filepath.Join(root, ".kb", "evals.yaml")
		if wd, err := os.Getwd(); err == nil {
			if rel, err := filepath.Rel(wd, name); err == nil {
				name = rel
			}
		}
	default:
		return nil, "", cli.Usagef("name an evals file: outside a repository there is no .kb/evals.yaml")
	}
	if _, err := os.Stat(name); errors.Is(err, os.ErrNotExist) {
		return nil, "", cli.Usagef("%s does not exist: write retrieval tests there (kbq eval --help shows how), or name a file", name)
	}
	js, err := readEvals(name)
	if err != nil {
		return nil, "", err
	}
	return js, name, nil
}

// readEvals reads the evals file name; what is wrong in it is the
// user's to fix.
func readEvals(name string) ([]evals.Judgment, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	js, err := evals.Read(f)
	if err != nil {
		return nil, cli.Usagef("%s: %v", name, err)
	}
	return js, nil
}

func writeEval(w io.Writer, res *evals.Result, worst int) error {
	fmt.Fprintf(w, "queries      %d\nnDCG@10      %.4f\nrecall@10    %.4f\nrecall@100   %.4f\nMRR          %.4f\n",
		res.Queries, res.NDCG10, res.Recall10, res.Recall100, res.MRR)
	if worst <= 0 {
		return nil
	}
	low := slices.Clone(res.PerQuery)
	slices.SortStableFunc(low, func(a, b evals.QueryScore) int { return cmp.Compare(a.NDCG10, b.NDCG10) })
	fmt.Fprintf(w, "\nlowest nDCG@10:\n")
	for _, q := range low[:min(worst, len(low))] {
		fmt.Fprintf(w, "  %.3f  %s  %s\n", q.NDCG10, q.ID, truncate(q.Query, 70))
	}
	return nil
}

func truncate(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// floorOf is --min-score as query.Request.Floor: 0 turns the floors off.
func floorOf(minScore float64) float64 {
	if minScore <= 0 {
		return query.FloorOff
	}
	return minScore
}
