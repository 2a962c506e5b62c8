package kbqcli

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/kbqdev/kbq/internal/answer"
	"github.com/kbqdev/kbq/internal/cli"
	"github.com/kbqdev/kbq/internal/visible"
	"github.com/kbqdev/kbq/knowledge"
	"github.com/kbqdev/kbq/query"
	"github.com/kbqdev/kbq/query/documents"
)

type listOptions struct {
	io                  *cli.Streams
	index               string
	out                 formatFlags
	kinds, tags, scopes []string
	sort                string
}

func newListCommand(s *cli.Streams) *cli.Command {
	o := &listOptions{io: s}
	return &cli.Command{
		Name:      "list",
		Usage:     "list documents",
		UsageText: "kbq list [--kind K] [--tag T] [--scope S] [--sort path|updated] [--format F | -l]",
		Description: `Lists the documents of the artifact with topic, kind, scope, tags,
source and when each last changed in git (the date of the commit, or
"uncommitted" for a file built with changes not yet committed), in path
order; --sort updated puts the most recently changed first. JSON formats
add the commit and its author.

` + answer.ExitCodesHelp,
		Flags: append([]cli.Flag{
			answer.IndexFlag(&o.index),
			&cli.StringSliceFlag{Name: "kind", Complete: cli.Values(knowledge.IndexedKinds()...), Usage: "only documents of `KIND`: " + knowledge.KindList("or") + " (repeatable)"},
			&cli.StringSliceFlag{Name: "tag", Complete: artifactTags(s), Usage: "only documents tagged `TAG` (repeatable)"},
			&cli.StringSliceFlag{Name: "scope", Complete: artifactScopes(s), Usage: "only documents of `SCOPE` and below (repeatable)"},
			&cli.StringFlag{Name: "sort", Complete: cli.Values("path", "updated"), Value: "path", Usage: "order by `path` or updated (most recent first)", Destination: &o.sort},
		}, o.out.flags()...),
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
	ix, err := answer.Open(s, o.index)
	if err != nil {
		return err
	}
	defer ix.Close()
	if o.sort != "path" && o.sort != "updated" {
		return cli.Usagef("--sort %q: want path or updated", o.sort)
	}
	docs, err := documents.List(ix, documents.ListRequest{Kinds: o.kinds, Tags: o.tags, Scopes: o.scopes, Sort: o.sort})
	if err != nil {
		return err
	}
	switch format {
	case "json":
		err = answer.WriteJSON(s.Out, docs)
	case "jsonl":
		err = writeJSONLines(s.Out, docs)
	case "csv":
		err = writeListCSV(s.Out, docs)
	case "md":
		err = writeListMarkdown(s.Out, docs)
	case "paths":
		paths := make([]string, len(docs))
		for i, d := range docs {
			paths[i] = d.Path
		}
		err = writePaths(s.Out, answer.HereRelative(ix.RepoRoot, paths))
	default:
		err = writeList(s.Out, docs, s.Width())
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

// writeList writes the documents as a table; within width columns (0: no
// limit), long topics, tags and sources are cut short, so that one long
// URL does not make every row wrap.
func writeList(w io.Writer, docs []documents.Listed, width int) error {
	if len(docs) == 0 {
		return nil
	}
	metas := make([]map[string]string, len(docs))
	for i, d := range docs {
		metas[i] = d.Meta
	}
	metaNames, metaCells := answer.MetaColumns(metas)
	head := []string{"TOPIC", "KIND", "SCOPE", "TAGS", "SOURCE"}
	for _, n := range metaNames {
		head = append(head, strings.ToUpper(n))
	}
	rows := [][]string{append(head, "UPDATED", "PATH")}
	for i, d := range docs {
		row := []string{visible.Line(d.Topic), d.Kind, visible.Line(d.Scope), orDash(visible.Line(strings.Join(d.Tags, ","))), orDash(visible.Line(d.Source))}
		for _, c := range metaCells[i] {
			row = append(row, visible.Line(c))
		}
		rows = append(rows, append(row, updatedCell(d.Age), visible.Line(d.Path)))
	}
	if width > 0 {
		fitColumns(rows, width, []int{3, 4, 0, 2}) // shorten tags, then sources, topics, scopes
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	return tw.Flush()
}

// updatedCell is a document's age in a table: its commit's date.
func updatedCell(a query.Age) string {
	switch {
	case a.Uncommitted:
		return "uncommitted"
	case len(a.Updated) >= len("2006-01-02"):
		return a.Updated[:len("2006-01-02")]
	}
	return "-"
}

// fitColumns cuts the cells of the columns in shrink, in turn, until the
// table's rows fit width (two spaces between columns), never below ten
// characters.
func fitColumns(rows [][]string, width int, shrink []int) {
	const gap, least = 2, 10
	widths := make([]int, len(rows[0]))
	for _, r := range rows {
		for i, c := range r {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	total := func() int {
		n := gap * (len(widths) - 1)
		for _, w := range widths {
			n += w
		}
		return n
	}
	for _, col := range shrink {
		if over := total() - width; over > 0 && widths[col] > least {
			widths[col] = max(least, widths[col]-over)
			for _, r := range rows[1:] {
				if utf8.RuneCountInString(r[col]) > widths[col] {
					r[col] = string([]rune(r[col])[:widths[col]-1]) + "…"
				}
			}
		}
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
