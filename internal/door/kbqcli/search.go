package kbqcli

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/kbqdev/kbq/internal/cli"
	"github.com/kbqdev/kbq/internal/door/online"
	"github.com/kbqdev/kbq/internal/door/reader"
	"github.com/kbqdev/kbq/internal/door/render"
	"github.com/kbqdev/kbq/internal/usage"
	"github.com/kbqdev/kbq/knowledge"
	"github.com/kbqdev/kbq/query"
)

type searchOptions struct {
	src       reader.Sources
	n         int
	maxTokens int
	dir       string
	allScopes bool
	retired   bool
	chunks    bool
	mode      string
	recency   string
	minScore  float64
	out       formatFlags
}

func newSearchCommand(s *cli.Streams) *cli.Command {
	o := &searchOptions{}
	return &cli.Command{
		Name:      "search",
		Quick:     true,
		Usage:     "search the knowledge",
		UsageText: "kbq search QUERY [-n N] [--max-tokens T] [--kind K] [--tag T] [--scope S] [--dir D] [--format F | -l]",
		Description: `Ranks chunks of documents (sections under their headings) with BM25 over
titles, headings, tags and text, and shows each document's best chunk.

QUERY SYNTAX:
   retry backoff          words: documents with more and rarer ones rank higher
   +retry  a AND b        required words
   "exact phrase"         a phrase: documents holding it rank first
   +"exact phrase"        a required phrase
   a OR b                 either
   -word  NOT word        excluded
   deploy*                a prefix (* and ? elsewhere are wildcards)
   tag:x kind:memory scope:services/api path:docs/   filters
   status:deprecated      documents of a status (active, draft, deprecated, superseded)
   updated:>2026-06-01    last changed in git after that day (<, <=, >, >=;
                          updated:<90d is older than 90 days, >2w the last two weeks)
   author:ada             last changed by an author whose name holds "ada"
` + knowledge.FilterHelp("   ") + `   repo:api               one repository, when several are searched
   title:rollback         a word in titles only
   Any other punctuation is text: paste questions as they are.

SCOPES: --dir (default: the current directory) decides which .kb/ scopes
are in force: global, project, and the directory scopes containing it. For
the same topic the deepest one wins. --scope S (or scope:S in the query)
searches scope S and the scopes below it from anywhere; --all-scopes
searches everything. When nothing in force matches but other scopes do,
kbq says how many on stderr.

NOTHING KNOWN: a result that matches too weakly (its words' score a small
share of what the query's words can score, and its meaning far from the
query's) is left out, and a query nothing answers gets no results: kbq
says "no knowledge matches" and exits 1. --min-score F scales those
floors (2 is stricter; 0 keeps every result); min_score in
.kb/config.yaml sets it for every search.

SEVERAL REPOSITORIES: --index DIR more than once, --repo NAME (of kbq
repos list) or --all-repos search several artifacts as one: results are
ranked as if one artifact had been built from all their files (BM25 with
the union's statistics), and each names its repository (repo:path, and
"repo" in JSON). Artifacts built with another embedding model than the
first's are searched by their words only, with a note.

OUTPUT: human text by default (colour on a terminal, never with NO_COLOR),
--format md (or --md) for agents (whole chunks), --format json (--json)
with path, topic, kind, scope, heading, lines, score, snippet, content,
tags, channels and the document's last change (updated, author, commit, or
uncommitted); jsonl, a result a line; csv; paths (-l), each document's path once,
to pipe into an editor or xargs. Results are trimmed to fit
--max-tokens (about 4 bytes a token); kbq says so on stderr when it trims.

EXAMPLES:
   kbq search how do we roll back a deploy
   kbq search '"feature flag" -legacy' --kind memory
   kbq search retries --json -n 3

` + reader.ExitCodesHelp,
		Flags: append(append(o.src.Flags(),
			&cli.IntFlag{Name: "n", Aliases: []string{"limit"}, Usage: "show `N` results", Value: query.DefaultN, Destination: &o.n},
			&cli.IntFlag{Name: "max-tokens", Usage: "fit results into about `T` tokens", Value: query.DefaultMaxTokens, Destination: &o.maxTokens},
			&cli.StringSliceFlag{Name: "kind", Complete: cli.Values(knowledge.IndexedKinds()...), Usage: "only documents of `KIND`: " + knowledge.KindList("or") + " (repeatable)"},
			&cli.StringSliceFlag{Name: "tag", Complete: artifactTags(s), Usage: "only documents tagged `TAG` (repeatable)"},
			&cli.StringSliceFlag{Name: "scope", Complete: artifactScopes(s), Usage: "only documents of `SCOPE` and below: global, project or a directory (repeatable)"},
			&cli.StringFlag{Name: "dir", Complete: cli.Dirs, Usage: "query from `DIR`: its scopes are in force (default: the current directory)", Destination: &o.dir},
			&cli.BoolFlag{Name: "all-scopes", Usage: "search every scope, without shadowing", Destination: &o.allScopes},
			&cli.BoolFlag{Name: "include-superseded", Usage: "keep documents another supersedes, or that are deprecated", Destination: &o.retired},
			&cli.StringFlag{Name: "recency", Usage: "rank recently changed documents higher, with a half-life of `AGE` (90d, 12w, 6m, 1y)", Destination: &o.recency},
			&cli.BoolFlag{Name: "chunks", Usage: "show every matching chunk, not each document's best", Destination: &o.chunks},
			&cli.FloatFlag{Name: "min-score", Usage: "scale the relevance floors by `F`: results that match too weakly are left out, and a query nothing answers gets none (1: the default; 0 keeps every result)", Value: 1, Destination: &o.minScore},
			&cli.StringFlag{Name: "mode", Complete: cli.Values(query.Modes...), Usage: "rank by `MODE`: hybrid (words and meaning, the default with vectors), lexical (words) or semantic (meaning)", Destination: &o.mode},
		), o.out.flags()...),
		Action: func(c *cli.Context) error { return runSearch(c, s, o) },
	}
}

func runSearch(c *cli.Context, s *cli.Streams, o *searchOptions) error {
	q := strings.TrimSpace(strings.Join(c.Args().Slice(), " "))
	if q == "" {
		return cli.Usagef("kbq search needs a query")
	}
	format, err := o.out.resolve()
	if err != nil {
		return err
	}
	if o.n < 1 || o.maxTokens < 1 {
		return cli.Usagef("-n and --max-tokens must be at least 1")
	}
	if o.mode != "" && !slices.Contains(query.Modes, o.mode) {
		return cli.Usagef("--mode %q: want %s", o.mode, strings.Join(query.Modes, ", "))
	}
	var recency time.Duration
	if o.recency != "" {
		if recency, err = query.ParseHalfLife(o.recency); err != nil {
			return cli.Usagef("--%v", err)
		}
	}
	maxTokens := o.maxTokens
	if format == "paths" && !c.IsSet("max-tokens") {
		maxTokens = math.MaxInt32 // the paths are what is printed, not the text
	}
	req := query.Request{
		Query: q, N: o.n, MaxTokens: maxTokens, AllScopes: o.allScopes, Chunks: o.chunks, IncludeSuperseded: o.retired,
		Kinds: c.StringSlice("kind"), Tags: c.StringSlice("tag"), Scopes: c.StringSlice("scope"), Mode: o.mode,
		Recency: recency,
	}
	if c.IsSet("min-score") {
		if o.minScore < 0 {
			return cli.Usagef("--min-score %g: want 0 (keep every result) or more", o.minScore)
		}
		req.Floor = floorOf(o.minScore)
	}
	ix, err := open(s, &o.src)
	if err != nil {
		return err
	}
	defer closeOpened(s, ix)
	if req.Dir, err = repoDir(ix, o.dir, "with several, search from their roots, or narrow with --scope"); err != nil {
		return err
	}
	embedder := online.QueryEmbedder(s)
	embedder.Once = true // one query, and the process ends
	if err := embedder.Vectorize(c.Context, ix, &req); err != nil {
		return err
	}
	resp, err := ix.Search(c.Context, req)
	if err != nil {
		return err
	}
	paths := func(results []query.Result) []string {
		repos, paths := make([]string, len(results)), make([]string, len(results))
		for i, r := range results {
			repos[i], paths[i] = r.Repo, r.Path
		}
		return shownPaths(ix, repos, paths)
	}
	record := func() {
		newUsage(s).RecordSearch(ix, usage.ViaCLI, q, resp.Results)
	}
	return writeSearch(s, o, resp, format, paths, record)
}

// writeSearch prints resp in format, records the documents handed out,
// and reports notes and trimming on stderr.
func writeSearch(s *cli.Streams, o *searchOptions, resp *query.Response, format string, paths func([]query.Result) []string, record func()) error {
	q := resp.Query
	var err error
	switch format {
	case "json":
		err = render.JSON(s.Out, resp)
	case "jsonl":
		err = render.JSONLines(s.Out, resp.Results)
	case "csv":
		err = render.SearchCSV(s.Out, resp.Results)
	case "md":
		err = render.SearchMarkdown(s.Out, resp)
	case "paths":
		err = render.Paths(s.Out, paths(resp.Results))
	default:
		err = render.SearchText(s.Out, resp, s.Color())
	}
	if err != nil {
		return err
	}
	// Use is recorded (the results' blobs, a write to the log) once the
	// output is written, on this goroutine: one started for it had nothing
	// but the notes below to run beside, and woke a second thread to do
	// it. A fresh search, 250 runs each alternating, the same binary with
	// the goroutine behind a switch, twice: medians 4.05 / 4.41 → 3.98 /
	// 4.31 ms.
	record()
	for _, n := range resp.Notes {
		fmt.Fprintf(s.Err, "kbq: %s\n", n)
	}
	if resp.Trimmed {
		fmt.Fprintf(s.Err, "kbq: results trimmed to fit --max-tokens %d\n", o.maxTokens)
	}
	if len(resp.Results) == 0 {
		fmt.Fprintf(s.Err, "kbq: no knowledge matches %q\n", q)
		if resp.Elsewhere > 0 {
			fmt.Fprintf(s.Err, "kbq: %d %s in scopes not in force here: search them with --all-scopes, or name one with --scope\n",
				resp.Elsewhere, plural(resp.Elsewhere, "chunk matches", "chunks match"))
		}
		return cli.ErrFailure
	}
	return nil
}
