package kbccli

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/kbqdev/kbq/artifact"
	"github.com/kbqdev/kbq/compiler"
	"github.com/kbqdev/kbq/internal/cli"
)

type buildOptions struct {
	source    sourceOptions
	out       string
	keepGoing bool
	full      bool
	verbose   bool
	format    string
	stemmer   string
	stopwords string
	embed     string
	noEmbed   bool
}

func newBuildCommand(s *cli.Streams, g *globalOptions) *cli.Command {
	o := &buildOptions{}
	return &cli.Command{
		Name:      "build",
		Usage:     "validate the knowledge and compile it into the artifact",
		UsageText: "kbc build [--rev REV | --staged | --worktree] [-o DIR] [--global | --no-global] [--keep-going]",
		Description: `Reads the knowledge of the repository containing the current directory,
validates every file, and compiles the search artifact: a Bluge index and
manifest.json in .kbq/ at the repository root (which gets a .gitignore of
its own).

What it reads: locally, the working tree (what the files say now, committed
or not), so that kbq finds every edit; in CI (CI=true), the commit at HEAD,
so that the artifact is the commit's and reproducible. --rev, --staged and
--worktree choose explicitly. kbc remember and kbc forget refresh the
artifact from the working tree themselves, and kbc watch keeps it in step
as files change. kbq stats says which source an artifact holds.

Any validation error fails the build and leaves the previous
artifact as it was, unless --keep-going, which leaves bad files out.

Builds are incremental: when the previous artifact was built the same way
and its index checks out against its manifest, only documents whose content
changed are compiled again (and their diagnostics reported). Otherwise, and
with --full, the build starts from nothing; -v says why. An artifact whose
manifest and index disagree is rebuilt, never updated. A full build is
reproducible: the same commit builds the same bytes (built_at comes from
SOURCE_DATE_EPOCH, else the commit time). Either way the new artifact
replaces the old one atomically, and a running kbq serve picks it up.

The global scope (` + globalDirHelp + `)
is included in local builds and left out when CI=true, so that CI
artifacts never depend on a home directory.

EXAMPLES:
   kbc build                      compile the working tree (HEAD when CI=true)
   kbc build --rev HEAD           compile the last commit only
   kbc build --rev v1.2 -o /tmp/kb
   kbc build --format github      annotate problems in a GitHub Actions run

` + exitCodesHelp,
		Flags: append(sourceFlags(&o.source, "default, unless CI=true"),
			&cli.StringFlag{Name: "out", Aliases: []string{"o"}, Usage: "write the artifact to `DIR` (default: .kbq at the repository root)", Destination: &o.out},
			&cli.BoolFlag{Name: "keep-going", Aliases: []string{"k"}, Usage: "leave out files with errors instead of failing", Destination: &o.keepGoing},
			&cli.BoolFlag{Name: "full", Usage: "compile and index every document anew (vectors of chunk texts the same model embedded before are kept: remove .kbq/ to embed again)", Destination: &o.full},
			&cli.BoolFlag{Name: "verbose", Aliases: []string{"v"}, Usage: "say why a build is full rather than incremental", Destination: &o.verbose},
			&cli.StringFlag{Name: "stemmer", Usage: "stem English words with `NAME`: porter, porter2 or none", Value: artifact.DefaultAnalysis.Stemmer, Destination: &o.stemmer},
			&cli.StringFlag{Name: "stopwords", Usage: "drop the stop words of `LIST`: lucene, snowball or none", Value: artifact.DefaultAnalysis.Stopwords, Destination: &o.stopwords},
			&cli.StringFlag{Name: "format", Complete: cli.Values("text", "github", "json"), Usage: "diagnostics as `FORMAT`: text, github or json", Value: "text", Destination: &o.format},
			&cli.StringFlag{Name: "embed", Usage: "embed every chunk for semantic search with `MODEL`: a model's name (all-MiniLM-L6-v2 is downloaded on first use into $KBQ_MODELS), its directory, or an OpenAI-compatible endpoint's URL (model from the configuration or $KBQ_EMBED_MODEL); overrides the configuration's embeddings", Destination: &o.embed},
			&cli.BoolFlag{Name: "no-embed", Usage: "build without vectors, whatever the configuration says", Destination: &o.noEmbed},
		),
		Action: func(c *cli.Context) error {
			if c.Args().Present() {
				return cli.Usagef("kbc build takes no arguments (got %q)", c.Args().First())
			}
			return runBuild(c, s, g, o)
		},
	}
}

func runBuild(c *cli.Context, s *cli.Streams, g *globalOptions, o *buildOptions) error {
	if err := checkFormat(o.format); err != nil {
		return err
	}
	analysis := artifact.Analysis{Stemmer: o.stemmer, Stopwords: o.stopwords, Fold: artifact.DefaultAnalysis.Fold}
	if !analysis.Valid() {
		return cli.Usagef("--stemmer %q or --stopwords %q: want porter, porter2 or none, and lucene, snowball or none", o.stemmer, o.stopwords)
	}
	if o.embed != "" && o.noEmbed {
		return cli.Usagef("--embed and --no-embed contradict each other")
	}
	o.source.fromContext(c)
	o.source.once = true
	src, err := openSource(s, g.workDir(), &o.source)
	if err != nil {
		return err
	}
	if !o.noEmbed {
		e := &embedders{ctx: c.Context, s: s, flag: o.embed}
		defer e.close()
		src.options.OpenEmbedder = e.open
	}
	_, err = compile(c.Context, s, src, compileSettings{
		out: o.out, analysis: analysis, keepGoing: o.keepGoing, full: o.full, verbose: o.verbose,
		format: o.format, diagnostics: s.Out,
	})
	return err
}

// compileSettings are what a build needs besides its source.
type compileSettings struct {
	out       string // "" for .kbq at the repository root
	analysis  artifact.Analysis
	keepGoing bool
	full      bool
	verbose   bool
	// format and diagnostics say how and where diagnostics are written.
	format      string
	diagnostics io.Writer
	// reuseVectors is another artifact whose vectors of the same model
	// are copied for chunks of the same text.
	reuseVectors string
}

// compile builds src into the artifact directory, writes the diagnostics,
// and reports the result on stderr.
func compile(ctx context.Context, s *cli.Streams, src *source, set compileSettings) (*compiler.BuildResult, error) {
	start := time.Now()
	out := set.out
	if out == "" {
		if src.repo.Root() == "" {
			return nil, cli.Usagef("a bare repository has no root to put .kbq/ in: give -o DIR")
		}
		out = filepath.Join(src.repo.Root(), artifact.DefaultDir)
	}
	if abs, err := filepath.Abs(out); err == nil {
		out = abs
	}
	builtAt, err := src.builtAt(s)
	if err != nil {
		return nil, err
	}
	src.options.Analysis = set.analysis
	opts := compiler.BuildOptions{
		Options: src.options, Out: out, Root: src.repo.Root(), Source: src.info, BuiltAt: builtAt, KeepGoing: set.keepGoing, Full: set.full,
		ReuseVectors: set.reuseVectors,
	}
	if src.info.Mode != "rev" && src.info.Commit != "" {
		if base, err := src.repo.RevOnce("HEAD"); err == nil {
			opts.Base = base
		}
	}
	if src.info.Commit != "" {
		opts.History = src.repo.History
	}
	if s.Getenv("SOURCE_DATE_EPOCH") == "" {
		opts.DirtyBuiltAt = time.Now().UTC().Truncate(time.Second)
	}
	_, noPrevious := os.Stat(filepath.Join(out, artifact.ManifestFile))
	paceBuildGC(s, set.full || noPrevious != nil)
	progress := cli.NewProgress(s, "compiling")
	opts.Progress = progress.Update
	embedding := cli.NewProgress(s, "embedding")
	opts.EmbedProgress = func(done, total int) {
		progress.Done()
		embedding.Update(done, total)
	}
	res, err := compiler.Build(ctx, src.snapshot, opts)
	progress.Done()
	embedding.Done()
	if res != nil {
		if werr := writeDiagnostics(set.diagnostics, set.format, res.Diagnostics); werr != nil {
			return nil, werr
		}
	}
	if err != nil {
		if res != nil && res.Diagnostics.Errors() > 0 {
			fmt.Fprintf(s.Err, "kbc: %d %s; nothing was built (fix them, or leave the files out with --keep-going)\n",
				res.Diagnostics.Errors(), plural(res.Diagnostics.Errors(), "error", "errors"))
			return nil, cli.ErrFailure
		}
		return nil, err
	}
	m := res.Manifest
	if set.verbose && res.FullReason != "" {
		fmt.Fprintf(s.Err, "kbc: full build: %s\n", res.FullReason)
	}
	fmt.Fprintf(s.Err, "kbc: built %s from %s: %d %s, %d %s", displayPath(out), sourceName(m.Source), m.Counts.Documents,
		plural(m.Counts.Documents, "document", "documents"), m.Counts.Chunks, plural(m.Counts.Chunks, "chunk", "chunks"))
	if res.Incremental {
		fmt.Fprintf(s.Err, " (%d compiled, %d reused)", res.Indexed, res.Reused)
	}
	if res.Skipped > 0 {
		fmt.Fprintf(s.Err, ", %d skipped", res.Skipped)
	}
	if m.Embeddings != nil {
		fmt.Fprintf(s.Err, ", %d embedded with %s", res.Embedded, m.Embeddings.Model)
	}
	fmt.Fprintf(s.Err, " in %.2fs\n", time.Since(start).Seconds())
	if m.Counts.Documents == 0 && res.Skipped == 0 {
		fmt.Fprintf(s.Err, "kbc: note: no knowledge found: it lives in .kb/ directories (and AGENTS.md, CLAUDE.md, GEMINI.md files); kbc init sets one up\n")
	}
	if m.Source.Shallow {
		fmt.Fprintf(s.Err, "kbc: note: the history is a shallow clone's: documents older than its first commit date from that commit (fetch-depth: 0 in actions/checkout reads all of it)\n")
	}
	return res, nil
}

// sourceName says in a few words what a build read.
func sourceName(src artifact.Source) string {
	switch src.Mode {
	case "worktree":
		return "the working tree"
	case "staged":
		return "git's index"
	}
	if src.Rev != "" {
		return src.Rev
	}
	return "HEAD"
}

func checkFormat(format string) error {
	for _, f := range diagnosticFormats {
		if f == format {
			return nil
		}
	}
	return cli.Usagef("--format %q: want text, github or json", format)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// displayPath shows p relative to the working directory when it is inside.
func displayPath(p string) string {
	if wd, err := filepath.Abs("."); err == nil {
		if rel, err := filepath.Rel(wd, p); err == nil && !filepath.IsAbs(rel) && rel != ".." && !startsWithDotDot(rel) {
			return rel
		}
	}
	return p
}

// displayRepoPath shows p, a path inside the repository at root, relative
// to the working directory, as git does (../.kb/x.md); else as it is.
func displayRepoPath(root, p string) string {
	wd, err := filepath.Abs(".")
	if err != nil {
		return p
	}
	if resolved, err := filepath.EvalSymlinks(wd); err == nil {
		wd = resolved
	}
	if resolved, err := filepath.EvalSymlinks(root); err == nil {
		root = resolved
	}
	if inRoot, err := filepath.Rel(root, wd); err != nil || startsWithDotDot(inRoot) || inRoot == ".." {
		return displayPath(p)
	}
	if rel, err := filepath.Rel(wd, p); err == nil {
		return rel
	}
	return p
}

func startsWithDotDot(p string) bool {
	return len(p) >= 3 && p[:3] == ".."+string(filepath.Separator)
}
