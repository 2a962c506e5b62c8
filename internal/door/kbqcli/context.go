package kbqcli

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/kbqdev/kbq/internal/cli"
	"github.com/kbqdev/kbq/internal/door/reader"
	"github.com/kbqdev/kbq/internal/door/render"
	"github.com/kbqdev/kbq/internal/safefs"
	"github.com/kbqdev/kbq/internal/units"
	"github.com/kbqdev/kbq/internal/visible"
	"github.com/kbqdev/kbq/knowledge"
	"github.com/kbqdev/kbq/query/documents"
)

type contextOptions struct {
	io           *cli.Streams
	src          reader.Sources
	dir          string
	wrap, asJSON bool
	hot          int
	agent, out   string
	force        bool
}

func newContextCommand(s *cli.Streams) *cli.Command {
	o := &contextOptions{io: s, hot: reader.HotDefault}
	return &cli.Command{
		Name:      "context",
		Quick:     true,
		Usage:     "print the always-loaded context for a directory",
		UsageText: "kbq context [--dir D] [--wrap] [--hot N] [--for claude|codex|gemini] [-o FILE]",
		Description: `Assembles the context documents (.kb/context.md, AGENTS.md, CLAUDE.md,
GEMINI.md) in force for --dir (default: the current directory): global,
project, then each directory scope on the way down, each under its own
heading, frontmatter stripped.

Budgets: global 3 KiB, project and each directory 7 KiB; past 10 KiB in
total kbq warns on stderr, past 20 KiB it cuts the context before a
heading, list item or paragraph (never inside one), says in the text what
it left out and how to read it (kbq get), and warns on stderr. A project
sets its own under budgets in .kb/config.yaml. --wrap wraps the text in
<system-reminder> tags and escapes such tags inside the knowledge.

--for sizes the context for the agent that reads it: codex (AGENTS.md, 32
KiB, project_doc_max_bytes), claude (Claude Code's MEMORY.md: 200 lines and
25 KB) or gemini (GEMINI.md, no documented limit: the total budget); it
warns only when the context is cut to that size. -o writes the context to
FILE instead of stdout, under a first line that marks it as kbq's:

   kbq context --for codex -o AGENTS.md

kbc build leaves a context file with that mark out, so a rerun does not
read the last one's output; -o replaces only a file kbq wrote, unless
--force.

KNOWLEDGE INDEX: the context ends with the --hot documents (default 5) in
force here that search and get handed out most in the last 30 days, one
line each (topic, tags, title), so that an agent knows what to search for;
before anything was used, those of highest importance. It counts in the
budgets.

` + reader.ExitCodesHelp,
		Flags: append(o.src.Flags(),
			&cli.StringFlag{Name: "dir", Complete: cli.Dirs, Usage: "assemble the context for `DIR` (default: the current directory)", Destination: &o.dir},
			&cli.BoolFlag{Name: "wrap", Usage: "wrap in <system-reminder> tags", Destination: &o.wrap},
			&cli.IntFlag{Name: "hot", Value: reader.HotDefault, Usage: "list `N` documents in the closing knowledge index (0: none)", Destination: &o.hot},
			&cli.BoolFlag{Name: "json", Usage: "print JSON: dir, text, sources, index, warnings, truncated", Destination: &o.asJSON},
			&cli.StringFlag{Name: "for", Complete: cli.Values("claude", "codex", "gemini"), Usage: "size the context for `AGENT`: claude, codex or gemini", Destination: &o.agent},
			&cli.StringFlag{Name: "o", Aliases: []string{"output"}, Usage: "write the context to `FILE`, marked as kbq's", Destination: &o.out},
			&cli.BoolFlag{Name: "force", Usage: "with -o, replace a file kbq did not write", Destination: &o.force},
		),
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
	ix, err := open(s, &o.src)
	if err != nil {
		return err
	}
	defer closeOpened(s, ix)
	req := reader.ContextRequest{ContextOptions: documents.ContextOptions{Wrap: o.wrap, IndexSize: hot}}
	if ix.Named() && ix.RepoRoot == "" {
		// The context of one repository, from wherever it is kept, with
		// the org scopes read with it in force.
		var own []string
		for _, p := range ix.Parts() {
			if p.Org == 0 {
				own = append(own, p.Name)
			}
		}
		if len(own) != 1 && len(ix.Parts()) != 1 {
			return cli.Usagef("kbq context assembles one repository's context; name one with --repo (there are %s)", strings.Join(own, ", "))
		}
		if req.Dir = filepath.ToSlash(filepath.Clean(o.dir)); req.Dir == "." {
			req.Dir = ""
		}
	} else if req.Dir, err = reader.RepoDir(ix.RepoRoot, o.dir); err != nil {
		return err
	}
	if hot < 0 {
		return cli.Usagef("--hot must be 0 or more")
	}
	if o.agent != "" {
		agent, ok := documents.Agents[o.agent]
		if !ok {
			return cli.Usagef("--for %q: want claude, codex or gemini", o.agent)
		}
		req.MaxBytes, req.MaxLines = agent.MaxBytes, agent.MaxLines
	}
	if hot > 0 {
		req.Usage = newUsage(s)
	}
	res, err := ix.Context(ctx, req)
	if err != nil {
		return err
	}
	d := req.Dir
	if o.asJSON {
		return render.JSON(s.Out, render.NewContextJSON(d, res))
	}
	for _, w := range res.Warnings {
		fmt.Fprintf(s.Err, "kbq: warning: %s\n", w)
	}
	if res.Truncated {
		limit := units.Bytes(int64(res.MaxBytes))
		if res.MaxLines > 0 {
			limit = fmt.Sprintf("%s or %d lines", limit, res.MaxLines)
		}
		fmt.Fprintf(s.Err, "kbq: warning: context is over %s; cut before a block, leaving out the rest of %s (the text says how to read it; shorten the context files, or raise budgets.total in .kb/config.yaml)\n",
			limit, strings.Join(res.Dropped, ", "))
	}
	if len(res.Sections) == 0 {
		fmt.Fprintf(s.Err, "kbq: no context applies to %s: add .kb/context.md (or AGENTS.md, CLAUDE.md, GEMINI.md) there or in a directory above it\n", cmp.Or(d, "the repository root"))
	}
	if o.out != "" {
		if data, err := os.ReadFile(o.out); err == nil && !o.force && !knowledge.IsGenerated(data) {
			return cli.Usagef("%s exists and kbq did not write it: -o would replace it; give --force to, or write elsewhere", o.out)
		}
		return writeOutput(o.out, []byte(knowledge.GeneratedHeader+res.Text))
	}
	_, err = io.WriteString(s.Out, visible.Text(res.Text))
	return err
}

// writeOutput replaces the file name with data, whole (safefs.Replace).
func writeOutput(name string, data []byte) error {
	if err := safefs.Replace(name, data, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	return nil
}
