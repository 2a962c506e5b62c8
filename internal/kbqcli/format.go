package kbqcli

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/kbqdev/kbq/internal/cli"
	"github.com/kbqdev/kbq/internal/visible"
	"github.com/kbqdev/kbq/knowledge"
	"github.com/kbqdev/kbq/query"
	"github.com/kbqdev/kbq/query/documents"
)

// Output formats of search and list.
var formats = []string{"text", "json", "jsonl", "csv", "md", "paths"}

// formatFlags are --format, -l (--files) and the older --json and --md.
type formatFlags struct {
	format   string
	paths    bool
	json, md bool
}

func (f *formatFlags) flags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "format", Complete: cli.Values(formats...), Usage: "print as `FORMAT`: text, json, jsonl, csv, md or paths", Destination: &f.format},
		&cli.BoolFlag{Name: "l", Aliases: []string{"files"}, Usage: "print only the documents' paths, one a line (--format paths)", Destination: &f.paths},
		&cli.BoolFlag{Name: "json", Usage: "print JSON (--format json)", Destination: &f.json},
		&cli.BoolFlag{Name: "md", Usage: "print markdown for agents (--format md)", Destination: &f.md},
	}
}

// resolve returns the one format asked for, "text" by default.
func (f *formatFlags) resolve() (string, error) {
	var chosen []string
	if f.format != "" {
		if !slices.Contains(formats, f.format) {
			return "", cli.Usagef("--format must be one of %s, not %q", strings.Join(formats, ", "), f.format)
		}
		chosen = append(chosen, f.format)
	}
	for _, alias := range []struct {
		set    bool
		format string
	}{{f.paths, "paths"}, {f.json, "json"}, {f.md, "md"}} {
		if alias.set && !slices.Contains(chosen, alias.format) {
			chosen = append(chosen, alias.format)
		}
	}
	switch len(chosen) {
	case 0:
		return "text", nil
	case 1:
		return chosen[0], nil
	}
	return "", cli.Usagef("choose one output format, not %s", strings.Join(chosen, " and "))
}

// writeJSONLines writes each item as a line of JSON.
func writeJSONLines[T any](w io.Writer, items []T) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for _, it := range items {
		if err := enc.Encode(it); err != nil {
			return err
		}
	}
	return nil
}

// writePaths writes each path once, in the order given, a line each
// whatever the path holds.
func writePaths(w io.Writer, paths []string) error {
	seen := map[string]bool{}
	for _, p := range paths {
		if !seen[p] {
			seen[p] = true
			if _, err := fmt.Fprintln(w, visible.Line(p)); err != nil {
				return err
			}
		}
	}
	return nil
}

// writeSearchCSV writes one row per result; tags are joined with ";".
func writeSearchCSV(w io.Writer, results []query.Result) error {
	cw := csv.NewWriter(w)
	cw.Write(append([]string{"path", "topic", "kind", "scope", "heading", "start_line", "end_line", "score", "tags", "updated", "author"}, metaHeader()...))
	for _, r := range results {
		updated := r.Updated
		if r.Uncommitted {
			updated = "uncommitted"
		}
		cw.Write(visibleCells(append([]string{r.Path, r.Topic, r.Kind, r.Scope, r.Heading, strconv.Itoa(r.Lines[0]), strconv.Itoa(r.Lines[1]),
			strconv.FormatFloat(r.Score, 'f', 4, 64), strings.Join(r.Tags, ";"), updated, r.Author}, metaCells(r.Meta)...)...))
	}
	cw.Flush()
	return cw.Error()
}

// writeListCSV writes one row per document; tags are joined with ";".
func writeListCSV(w io.Writer, docs []documents.Listed) error {
	cw := csv.NewWriter(w)
	cw.Write(append([]string{"path", "topic", "kind", "scope", "title", "tags", "source"}, metaHeader()...))
	for _, d := range docs {
		cw.Write(visibleCells(append([]string{d.Path, d.Topic, d.Kind, d.Scope, d.Title, strings.Join(d.Tags, ";"), d.Source}, metaCells(d.Meta)...)...))
	}
	cw.Flush()
	return cw.Error()
}

// writeListMarkdown writes a table of the documents.
func writeListMarkdown(w io.Writer, docs []documents.Listed) error {
	fmt.Fprintf(w, "| path | topic | kind | scope | title | tags |\n|---|---|---|---|---|---|\n")
	escape := strings.NewReplacer("|", `\|`)
	cell := func(s string) string { return escape.Replace(visible.Line(s)) }
	for _, d := range docs {
		fmt.Fprintf(w, "| `%s` | %s | %s | %s | %s | %s |\n", cell(d.Path), cell(d.Topic), d.Kind, cell(d.Scope),
			cell(d.Title), cell(strings.Join(d.Tags, ", ")))
	}
	return nil
}

// metaHeader names a CSV column for each of the registry's Meta keys.
func metaHeader() []string {
	var names []string
	for _, k := range knowledge.MetaKeys() {
		names = append(names, k.Name)
	}
	return names
}

// metaCells are a row's cells under metaHeader.
func metaCells(meta map[string]string) []string {
	var cells []string
	for _, k := range knowledge.MetaKeys() {
		cells = append(cells, meta[k.Name])
	}
	return cells
}

// visibleCells are the cells of a CSV row with their control characters
// escaped (one line each: a CSV row is a line on a terminal too).
func visibleCells(cells ...string) []string {
	for i, c := range cells {
		cells[i] = visible.Line(c)
	}
	return cells
}
