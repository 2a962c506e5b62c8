package kbccli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/kbqdev/kbq/artifact"
	"github.com/kbqdev/kbq/compiler"
	"github.com/kbqdev/kbq/internal/cli"
	"github.com/kbqdev/kbq/knowledge"
	"github.com/kbqdev/kbq/query"
	"github.com/kbqdev/kbq/query/documents"
)

type checkOptions struct {
	source sourceOptions
	all    bool
	format string
	dups   float64
}

func newCheckCommand(s *cli.Streams, g *globalOptions) *cli.Command {
	o := &checkOptions{}
	return &cli.Command{
		Name:      "check",
		Usage:     "validate knowledge files without building",
		UsageText: "kbc check [--rev REV | --staged [--all] | --worktree] [--format text|github|json] [PATH...]",
		Description: `Validates knowledge files like a compiler and reports every problem in one
run, one per line:

   path:line:col: error: message

With PATH arguments, only those files (or the files below those
directories) are checked; the memories and context files of their scopes
are still read, for duplicate ids and context budgets.

With --staged, the files in git's index that differ from HEAD are checked:
what the next commit changes. Add --all to check every staged file. This
is what the pre-commit hook runs; it honours GIT_INDEX_FILE, which git sets
during "git commit -a".

DUPLICATES: a memory or topic that shares --dup-threshold (default 0.8) of
its word triples with another of the same scope is a warning naming both.
When only some files are checked (PATH, --staged), the others of their
scope are looked up in the artifact (.kbq/), if there is one.

` + knowledge.KindsHelp() + `
EXAMPLES:
   kbc check                          the working tree (HEAD when CI=true)
   kbc check .kb/memories             your memories as they are on disk
   kbc check --staged                 what you are about to commit
   kbc check --format github          annotations for GitHub Actions
   kbc check --format json            a JSON array for tools

` + exitCodesHelp,
		Flags: append(sourceFlags(&o.source, "default, unless CI=true"),
			&cli.BoolFlag{Name: "all", Usage: "with --staged: check every staged knowledge file, not only the changed ones", Destination: &o.all},
			&cli.StringFlag{Name: "format", Complete: cli.Values("text", "github", "json"), Usage: "diagnostics as `FORMAT`: text, github or json", Value: "text", Destination: &o.format},
			&cli.FloatFlag{Name: "dup-threshold", Value: compiler.DefaultDuplicateThreshold, Usage: "warn of near duplicates sharing `F` of their word triples (0: off)", Destination: &o.dups},
		),
		Action: func(c *cli.Context) error { return runCheck(c, s, g, o) },
	}
}

func runCheck(c *cli.Context, s *cli.Streams, g *globalOptions, o *checkOptions) error {
	if err := checkFormat(o.format); err != nil {
		return err
	}
	if o.all && !o.source.staged {
		return cli.Usagef("--all only applies to --staged")
	}
	o.source.fromContext(c)
	src, err := openSource(s, g.workDir(), &o.source)
	if err != nil {
		return err
	}
	if err := src.options.Resolve(src.snapshot); err != nil {
		return err
	}
	var paths []string
	if c.Args().Present() {
		if paths, err = repoPaths(src.repo.Root(), g.workDir(), c.Args().Slice()); err != nil {
			return err
		}
	}
	if o.source.staged && !o.all {
		changed, all, err := stagedChanges(src)
		if err != nil {
			return err
		}
		if !all {
			if paths != nil {
				changed = slices.DeleteFunc(changed, func(p string) bool { return !compiler.UnderAny(p, paths) })
			}
			paths = changed
			if len(paths) == 0 {
				fmt.Fprintln(s.Err, "kbc: no staged knowledge differs from HEAD: nothing to check (--all checks every staged file)")
				return writeDiagnostics(s.Out, o.format, nil)
			}
		}
	}
	if o.dups < 0 || o.dups > 1 {
		return cli.Usagef("--dup-threshold must be between 0 and 1")
	}
	opts := compiler.CheckOptions{Options: src.options, Paths: paths, DuplicateThreshold: o.dups}
	if paths != nil && o.dups > 0 && src.repo.Root() != "" {
		similar, done := artifactSimilar(c.Context, filepath.Join(src.repo.Root(), artifact.DefaultDir))
		defer done()
		opts.Similar = similar
	}
	res, err := compiler.Check(c.Context, src.snapshot, opts)
	if err != nil {
		return err
	}
	if err := writeDiagnostics(s.Out, o.format, res.Diagnostics); err != nil {
		return err
	}
	if c.Args().Present() && !o.source.staged {
		if err := checkPathsHeldKnowledge(src, g.workDir(), c.Args().Slice(), paths, res); err != nil {
			return err
		}
	}
	errs, warnings := res.Diagnostics.Errors(), len(res.Diagnostics)-res.Diagnostics.Errors()
	summary := fmt.Sprintf("%d %s checked", res.Checked, plural(res.Checked, "file", "files"))
	if warnings > 0 {
		summary += fmt.Sprintf(", %d %s", warnings, plural(warnings, "warning", "warnings"))
	}
	if errs > 0 {
		fmt.Fprintf(s.Err, "kbc: %d %s in %s\n", errs, plural(errs, "error", "errors"), summary)
		return cli.ErrFailure
	}
	fmt.Fprintf(s.Err, "kbc: %s, no errors\n", summary)
	return nil
}

// checkPathsHeldKnowledge refuses PATH arguments that name nothing, or
// nothing kbc reads: a mistyped path must not pass as checked.
func checkPathsHeldKnowledge(src *source, dir string, args, paths []string, res *compiler.CheckResult) error {
	for i, p := range paths {
		held := p == compiler.ConfigPath && src.options.Config.Hash != "" || slices.ContainsFunc(res.Documents, func(d artifact.Document) bool { return compiler.UnderAny(d.Path, []string{p}) }) ||
			slices.ContainsFunc(res.Diagnostics, func(d compiler.Diagnostic) bool { return compiler.UnderAny(d.Path, []string{p}) })
		if held {
			continue
		}
		abs := args[i]
		if !filepath.IsAbs(abs) {
			abs = filepath.Join(dir, abs)
		}
		if _, err := os.Stat(abs); err != nil {
			return cli.Usagef("%s: no such file or directory", args[i])
		}
		return cli.Usagef("%s holds no knowledge: kbc checks the markdown files of .kb/ directories and the context files (%s)",
			args[i], strings.Join(src.options.ContextFiles, ", "))
	}
	return nil
}

// artifactSimilar finds, in the artifact in dir, the memories and topics of
// a scope most like a text: a search for its most frequent words, in that
// scope alone. Without a usable artifact it finds nothing.
func artifactSimilar(ctx context.Context, dir string) (func(scope, path, body string) ([]compiler.Similar, error), func()) {
	ix, err := query.Open(dir)
	if err != nil {
		return nil, func() {}
	}
	return func(scope, path, body string) ([]compiler.Similar, error) {
		resp, err := ix.Search(ctx, query.Request{Query: likeQuery(body), N: 5, AllScopes: true, Scopes: []string{scope},
			Kinds: []string{knowledge.KindMemory, knowledge.KindTopic}})
		if err != nil {
			return nil, nil // an artifact that cannot answer finds nothing
		}
		var out []compiler.Similar
		for _, r := range resp.Results {
			if r.Path == path || r.Scope != scope {
				continue
			}
			doc, err := documents.Get(ctx, ix, r.Path, "")
			if err != nil {
				continue
			}
			out = append(out, compiler.Similar{Path: r.Path, Line: strings.Count(doc.Content[:len(doc.Content)-len(doc.Body)], "\n") + 1, Body: doc.Body})
		}
		return out, nil
	}, func() { ix.Close() }
}

// likeQuery is a query for documents like text: its 16 most frequent words
// of four letters or more (more words cost more than they find).
func likeQuery(text string) string {
	counts := map[string]int{}
	var order []string
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if utf8.RuneCountInString(w) < 4 {
			continue
		}
		if counts[w] == 0 {
			order = append(order, w)
		}
		counts[w]++
	}
	slices.SortStableFunc(order, func(a, b string) int { return counts[b] - counts[a] })
	return strings.Join(order[:min(len(order), 16)], " ")
}

// stagedChanges lists the staged knowledge files whose content differs
// from HEAD's; all is set when the configuration differs (added, changed
// or removed), which concerns every file.
func stagedChanges(src *source) (changed []string, all bool, err error) {
	files, err := compiler.KnowledgeFiles(src.snapshot, src.options)
	if err != nil {
		return nil, false, err
	}
	config, hasConfig, err := src.snapshot.Lookup(compiler.ConfigPath)
	if err != nil {
		return nil, false, err
	}
	paths := make([]string, len(files), len(files)+1)
	for i, f := range files {
		paths[i] = f.Path
	}
	if src.info.Commit == "" {
		return paths, false, nil // no commit yet: everything staged is new
	}
	head, err := src.repo.BlobsAt("HEAD", append(paths, compiler.ConfigPath))
	if err != nil {
		return nil, false, err
	}
	staged := "" // the configuration's blob in the index, "" without one
	if hasConfig {
		staged = config.Blob
	}
	if head[compiler.ConfigPath] != staged {
		return nil, true, nil
	}
	changed = []string{}
	for _, f := range files {
		if f.Blob == "" || head[f.Path] != f.Blob {
			changed = append(changed, f.Path)
		}
	}
	return changed, false, nil
}

// repoPaths turns command-line paths, relative to dir, into slash-separated
// paths relative to the repository root.
func repoPaths(root, dir string, args []string) ([]string, error) {
	if root == "" {
		return nil, cli.Usagef("a bare repository has no files to name; drop the PATH arguments")
	}
	var out []string
	for _, a := range args {
		p := a
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		abs, err := filepath.Abs(p)
		if err != nil {
			return nil, err
		}
		rel, err := filepath.Rel(root, abs)
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return nil, cli.Usagef("%s is outside the repository at %s", a, root)
		}
		out = append(out, filepath.ToSlash(rel))
	}
	return out, nil
}
