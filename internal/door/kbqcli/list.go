package kbqcli

import (
	"context"
	"fmt"

	"github.com/kbqdev/kbq/internal/cli"
	"github.com/kbqdev/kbq/internal/door/reader"
	"github.com/kbqdev/kbq/internal/door/render"
	"github.com/kbqdev/kbq/knowledge"
	"github.com/kbqdev/kbq/query/documents"
)

type listOptions struct {
	io                  *cli.Streams
	src                 reader.Sources
	out                 formatFlags
	kinds, tags, scopes []string
	sort                string
}

func newListCommand(s *cli.Streams) *cli.Command {
	o := &listOptions{io: s}
	return &cli.Command{
		Name:      "list",
		Quick:     true,
		Usage:     "list documents",
		UsageText: "kbq list [--kind K] [--tag T] [--scope S] [--sort path|updated] [--format F | -l]",
		Description: `Lists the documents of the artifact with topic, kind, scope, tags,
source and when each last changed in git (the date of the commit, or
"uncommitted" for a file built with changes not yet committed), in path
order; --sort updated puts the most recently changed first. JSON formats
add the commit and its author.

` + reader.ExitCodesHelp,
		Flags: append(append(o.src.Flags(),
			&cli.StringSliceFlag{Name: "kind", Complete: cli.Values(knowledge.IndexedKinds()...), Usage: "only documents of `KIND`: " + knowledge.KindList("or") + " (repeatable)"},
			&cli.StringSliceFlag{Name: "tag", Complete: artifactTags(s), Usage: "only documents tagged `TAG` (repeatable)"},
			&cli.StringSliceFlag{Name: "scope", Complete: artifactScopes(s), Usage: "only documents of `SCOPE` and below (repeatable)"},
			&cli.StringFlag{Name: "sort", Complete: cli.Values("path", "updated"), Value: "path", Usage: "order by `path` or updated (most recent first)", Destination: &o.sort},
		), o.out.flags()...),
		Action: func(c *cli.Context) error {
			if c.Args().Present() {
				return cli.Usagef("kbq list takes no arguments; filter with --kind, --tag or --scope")
			}
			o.kinds, o.tags, o.scopes = c.StringSlice("kind"), c.StringSlice("tag"), c.StringSlice("scope")
			return runList(o)
		},
	}
}

func runList(o *listOptions) error {
	s := o.io
	format, err := o.out.resolve()
	if err != nil {
		return err
	}
	if o.sort != "path" && o.sort != "updated" {
		return cli.Usagef("--sort %q: want path or updated", o.sort)
	}
	req := documents.ListRequest{Kinds: o.kinds, Tags: o.tags, Scopes: o.scopes, Sort: o.sort}
	ix, err := open(s, &o.src)
	if err != nil {
		return err
	}
	defer closeOpened(s, ix)
	docs, err := ix.List(context.Background(), req)
	if err != nil {
		return err
	}
	paths := func() []string {
		repos, paths := make([]string, len(docs)), make([]string, len(docs))
		for i, d := range docs {
			repos[i], paths[i] = d.Repo, d.Path
		}
		return shownPaths(ix, repos, paths)
	}
	switch format {
	case "json":
		err = render.JSON(s.Out, docs)
	case "jsonl":
		err = render.JSONLines(s.Out, docs)
	case "csv":
		err = render.ListCSV(s.Out, docs)
	case "md":
		err = render.ListMarkdown(s.Out, docs)
	case "paths":
		err = render.Paths(s.Out, paths())
	default:
		err = render.ListTable(s.Out, docs, s.Width())
	}
	if err != nil {
		return err
	}
	if len(docs) == 0 {
		fmt.Fprintln(s.Err, "kbq: no documents")
		return cli.ErrFailure
	}
	return nil
}
