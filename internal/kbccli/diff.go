package kbccli

import (
	"slices"

	"github.com/kbqdev/kbq/compiler"
	"github.com/kbqdev/kbq/gitsource"
	"github.com/kbqdev/kbq/internal/cli"
)

func newDiffCommand(s *cli.Streams, g *globalOptions) *cli.Command {
	var format string
	return &cli.Command{
		Name:      "diff",
		Usage:     "list the knowledge changes between two revisions",
		UsageText: "kbc diff BASE [HEAD] [--format text|md|json]",
		Description: `Lists the documents added, changed and removed between BASE and HEAD
(default: HEAD), with kind, topic, scope, title and validation status; the
added and changed documents are validated as HEAD holds them. --format md
is ready to post as a pull-request comment.

EXAMPLES:
   kbc diff main
   kbc diff origin/main HEAD --format md > comment.md
   gh pr comment "$PR" --body-file comment.md

` + exitCodesHelp + `
   (diff reports validation errors; it exits 0 unless it cannot run)`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "format", Usage: "print as `FORMAT`: text, md or json", Value: "text", Destination: &format},
			contextFilesFlag(),
		},
		Action: func(c *cli.Context) error {
			if c.NArg() < 1 || c.NArg() > 2 {
				return cli.Usagef("kbc diff takes a base revision and, optionally, a head revision")
			}
			if !slices.Contains(compiler.DiffFormats, format) {
				return cli.Usagef("--format %q: want text, md or json", format)
			}
			baseRev, headRev := c.Args().Get(0), "HEAD"
			if c.NArg() == 2 {
				headRev = c.Args().Get(1)
			}
			repo, err := gitsource.Open(g.workDir())
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
			res, err := compiler.Diff(c.Context, base, head, compiler.Options{ContextFiles: c.StringSlice("context-files")})
			if err != nil {
				return err
			}
			res.Base, res.Head = base.Info().Commit, head.Info().Commit
			return compiler.WriteDiff(s.Out, format, res)
		},
	}
}
