package kbccli

import (
	"slices"
	"strings"

	"github.com/kbqdev/kbq/compiler"
	"github.com/kbqdev/kbq/gitsource"
	"github.com/kbqdev/kbq/internal/cli"
)

// diffRange reads kbc diff's arguments into the two revisions to compare.
func diffRange(repo *gitsource.Repo, args []string) (base, head string, err error) {
	orHEAD := func(rev string) string {
		if rev == "" {
			return "HEAD"
		}
		return rev
	}
	if len(args) == 2 {
		return args[0], args[1], nil
	}
	if a, b, ok := strings.Cut(args[0], "..."); ok {
		base, err := repo.MergeBase(orHEAD(a), orHEAD(b))
		return base, orHEAD(b), err
	}
	if a, b, ok := strings.Cut(args[0], ".."); ok {
		return orHEAD(a), orHEAD(b), nil
	}
	base, err = repo.MergeBase(args[0], "HEAD")
	return base, "HEAD", err
}

func newDiffCommand(s *cli.Streams, g *globalOptions) *cli.Command {
	var format string
	return &cli.Command{
		Name:      "diff",
		Usage:     "list the knowledge changes between two revisions",
		UsageText: "kbc diff BASE | A..B | A...B | BASE HEAD [--format text|md|json]",
		Description: `Lists the documents added, changed and removed between two revisions,
with kind, topic, scope, title and validation status; the added and
changed documents are validated as the later one holds them. --format md
is ready to post as a pull-request comment.

It then lists the knowledge that may need an update: documents the change
leaves untouched that name a file it modifies, renames or deletes (a
relative markdown link, or a path in a code span, the file's or a
directory holding it), with the line that names it.

Revisions read as git's do: kbc diff BASE compares HEAD with where it
forked from BASE (their merge base, as git diff BASE... does), so that a
branch behind BASE does not list BASE's newer documents as removed;
A...B is the same from A to B; A..B and BASE HEAD compare the two
revisions as they are. An empty side of .. or ... is HEAD.

EXAMPLES:
   kbc diff main
   kbc diff origin/main HEAD --format md > comment.md
   gh pr comment "$PR" --body-file comment.md

` + exitCodesHelp + `
   (diff reports validation errors; it exits 0 unless it cannot run)`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "format", Complete: cli.Values("text", "md", "json"), Usage: "print as `FORMAT`: text, md or json", Value: "text", Destination: &format},
			contextFilesFlag(),
		},
		Action: func(c *cli.Context) error {
			if c.NArg() < 1 || c.NArg() > 2 {
				return cli.Usagef("kbc diff takes a base revision and, optionally, a head revision")
			}
			if !slices.Contains(diffFormats, format) {
				return cli.Usagef("--format %q: want text, md or json", format)
			}
			repo, err := gitsource.Open(g.workDir())
			if err != nil {
				return err
			}
			baseRev, headRev, err := diffRange(repo, c.Args().Slice())
			if err != nil {
				return err
			}
			base, err := repo.Rev(baseRev)
			if err != nil {
				return err
			}
			head, err := repo.Rev(headRev)
			if err != nil {
				return err
			}
			res, err := compiler.Diff(c.Context, base, head, diffOptions(c))
			if err != nil {
				return err
			}
			res.Base, res.Head = base.Info().Commit, head.Info().Commit
			return writeDiff(s.Out, format, res)
		},
	}
}

// diffOptions are the settings of both sides of a diff: --context-files
// when given, else each side's configuration.
func diffOptions(c *cli.Context) compiler.Options {
	var o compiler.Options
	if c.IsSet("context-files") {
		o.ContextFiles = contextFilesOf(c)
	}
	return o
}
