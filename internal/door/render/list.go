package render

import (
	"encoding/csv"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/kbqdev/kbq/internal/visible"
	"github.com/kbqdev/kbq/query"
	"github.com/kbqdev/kbq/query/documents"
)

// ListCSV writes one row per document; tags are joined with ";".
func ListCSV(w io.Writer, docs []documents.Listed) error {
	repos := slices.ContainsFunc(docs, func(d documents.Listed) bool { return d.Repo != "" })
	cw := csv.NewWriter(w)
	head := append([]string{"path", "topic", "kind", "scope", "title", "tags", "source"}, metaHeader()...)
	if repos {
		head = append(head, "repo")
	}
	cw.Write(head)
	for _, d := range docs {
		row := append([]string{d.Path, d.Topic, d.Kind, d.Scope, d.Title, strings.Join(d.Tags, ";"), d.Source}, metaCells(d.Meta)...)
		if repos {
			row = append(row, d.Repo)
		}
		cw.Write(visibleCells(row...))
	}
	cw.Flush()
	return cw.Error()
}

// ListMarkdown writes a table of the documents.
func ListMarkdown(w io.Writer, docs []documents.Listed) error {
	metas := make([]map[string]string, len(docs))
	for i, d := range docs {
		metas[i] = d.Meta
	}
	metaNames, metaCells := MetaColumns(metas)
	escape := strings.NewReplacer("|", `\|`)
	cell := func(s string) string { return escape.Replace(visible.Line(s)) }
	head := append([]string{"path", "topic", "kind", "scope", "title", "tags"}, metaNames...)
	fmt.Fprintf(w, "| %s |\n|%s\n", strings.Join(head, " | "), strings.Repeat("---|", len(head)))
	for i, d := range docs {
		row := []string{"`" + cell(listedPath(d)) + "`", cell(d.Topic), d.Kind, cell(d.Scope), cell(d.Title), cell(strings.Join(d.Tags, ", "))}
		for _, c := range metaCells[i] {
			row = append(row, cell(c))
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(row, " | "))
	}
	return nil
}

// ListTable writes the documents as a table; within width columns (0: no
// limit), long topics, tags and sources are cut short, so that one long
// URL does not make every row wrap.
func ListTable(w io.Writer, docs []documents.Listed, width int) error {
	if len(docs) == 0 {
		return nil
	}
	metas := make([]map[string]string, len(docs))
	for i, d := range docs {
		metas[i] = d.Meta
	}
	metaNames, metaCells := MetaColumns(metas)
	head := []string{"TOPIC", "KIND", "SCOPE", "TAGS", "SOURCE"}
	for _, n := range metaNames {
		head = append(head, strings.ToUpper(n))
	}
	rows := [][]string{append(head, "UPDATED", "PATH")}
	for i, d := range docs {
		row := []string{visible.Line(d.Topic), d.Kind, visible.Line(d.Scope), OrDash(visible.Line(strings.Join(d.Tags, ","))), OrDash(visible.Line(d.Source))}
		for _, c := range metaCells[i] {
			row = append(row, visible.Line(c))
		}
		rows = append(rows, append(row, UpdatedCell(d.Age), visible.Line(listedPath(d))))
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

// UpdatedCell is a document's age in a table: its commit's date.
func UpdatedCell(a query.Age) string {
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

func OrDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// listedPath is a listed document's path, after its repository's name
// when several were read.
func listedPath(d documents.Listed) string {
	if d.Repo == "" {
		return d.Path
	}
	return d.Repo + ":" + d.Path
}
