package kbqcli

import (
	"cmp"
	"context"
	"fmt"
	"io"

	"github.com/kbqdev/kbq/internal/answer"
	"github.com/kbqdev/kbq/internal/cli"
	"github.com/kbqdev/kbq/internal/units"
	"github.com/kbqdev/kbq/internal/visible"
	"github.com/kbqdev/kbq/query"
)

type contextOptions struct {
	io           *cli.Streams
	index, dir   string
	wrap, asJSON bool
	hot          int
}

func newContextCommand(s *cli.Streams) *cli.Command {
	o := &contextOptions{io: s, hot: answer.HotDefault}
	return &cli.Command{
		Name:      "context",
		Usage:     "print the always-loaded context for a directory",
		UsageText: "kbq context [--dir D] [--wrap] [--hot N]",
		Description: `Assembles the context documents (.kb/context.md, AGENTS.md, CLAUDE.md,
GEMINI.md) in force for --dir (default: the current directory): global,
project, then each directory scope on the way down, each under its own
heading, frontmatter stripped.

Budgets: global 3 KiB, project and each directory 7 KiB; past 10 KiB in
total kbq warns on stderr, past 20 KiB it truncates (never inside a
character) and says so on stderr. A project sets its own under budgets in
.kb/config.yaml. --wrap wraps the text in
<system-reminder> tags and escapes such tags inside the knowledge.

KNOWLEDGE INDEX: the context ends with the --hot documents (default 5) in
force here that search and get handed out most in the last 30 days, one
line each (topic, tags, title), so that an agent knows what to search for;
before anything was used, those of highest importance. It counts in the
budgets.

` + answer.ExitCodesHelp,
		Flags: []cli.Flag{
			answer.IndexFlag(&o.index),
			&cli.StringFlag{Name: "dir", Usage: "assemble the context for `DIR` (default: the current directory)", Destination: &o.dir},
			&cli.BoolFlag{Name: "wrap", Usage: "wrap in <system-reminder> tags", Destination: &o.wrap},
			&cli.IntFlag{Name: "hot", Value: answer.HotDefault, Usage: "list `N` documents in the closing knowledge index (0: none)", Destination: &o.hot},
			&cli.BoolFlag{Name: "json", Usage: "print JSON: dir, text, sources, index, warnings, truncated", Destination: &o.asJSON},
		},
		Action: func(c *cli.Context) error {
			if c.Args().Present() {
				return cli.Usagef("kbq context takes no arguments; give the directory with --dir")
			}
			return runContext(c.Context, o)
		},
	}
}

func runContext(ctx context.Context, o *contextOptions) error {
	s, hot := o.io, o.hot
	ix, err := answer.Open(s, o.index)
	if err != nil {
		return err
	}
	defer ix.Close()
	d, err := answer.RepoDir(ix.RepoRoot, o.dir)
	if err != nil {
		return err
	}
	if hot < 0 {
		return cli.Usagef("--hot must be 0 or more")
	}
	opts := query.ContextOptions{Wrap: o.wrap, IndexSize: hot}
	if hot > 0 {
		opts.Uses = answer.NewUsage(s).Recent(ix.Dir)
	}
	res, err := ix.Context(ctx, d, opts)
	if err != nil {
		return err
	}
	if o.asJSON {
		return answer.WriteJSON(s.Out, answer.NewContextJSON(d, res))
	}
	for _, w := range res.Warnings {
		fmt.Fprintf(s.Err, "kbq: warning: %s\n", w)
	}
	if res.Truncated {
		fmt.Fprintf(s.Err, "kbq: error: context is over %s; truncated to fit (shorten the context files, or raise budgets.total in .kb/config.yaml)\n", units.Bytes(int64(res.MaxBytes)))
	}
	if len(res.Sections) == 0 {
		fmt.Fprintf(s.Err, "kbq: no context applies to %s: add .kb/context.md (or AGENTS.md, CLAUDE.md, GEMINI.md) there or in a directory above it\n", cmp.Or(d, "the repository root"))
	}
	_, err = io.WriteString(s.Out, visible.Text(res.Text))
	return err
}
