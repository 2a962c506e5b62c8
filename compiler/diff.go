package compiler

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/kbqdev/kbq/artifact"
	"github.com/kbqdev/kbq/gitsource"
)

// DiffEntry is a document added, changed or removed between two revisions.
type DiffEntry struct {
	Change      string      `json:"change"` // "added", "changed" or "removed"
	Path        string      `json:"path"`
	Kind        string      `json:"kind"`
	Topic       string      `json:"topic"`
	Scope       string      `json:"scope"`
	Title       string      `json:"title"`
	Errors      int         `json:"errors"`
	Warnings    int         `json:"warnings"`
	Diagnostics Diagnostics `json:"diagnostics"`
}

// DiffResult lists the knowledge changes between two revisions.
type DiffResult struct {
	Base    string      `json:"base"`
	Head    string      `json:"head"`
	Entries []DiffEntry `json:"changes"`
}

// Diff compares the knowledge documents of base and head, and validates
// the added and changed ones as head holds them.
func Diff(ctx context.Context, base, head Source, opts Options) (*DiffResult, error) {
	// Each side is read with its own configuration.
	files := func(src Source) (map[string]gitsource.File, error) {
		opts := opts
		if err := opts.Resolve(src); err != nil {
			return nil, err
		}
		list, err := KnowledgeFiles(src, opts)
		if err != nil {
			return nil, err
		}
		out := make(map[string]gitsource.File, len(list))
		for _, f := range list {
			if loc, _ := classify(f.Path, opts.ContextFiles); loc.kind != artifact.KindAttachment {
				out[f.Path] = f
			}
		}
		return out, nil
	}
	before, err := files(base)
	if err != nil {
		return nil, err
	}
	after, err := files(head)
	if err != nil {
		return nil, err
	}
	var touched, removed []string
	for p, f := range after {
		if old, ok := before[p]; !ok || old.Blob != f.Blob {
			touched = append(touched, p)
		}
	}
	for p := range before {
		if _, ok := after[p]; !ok {
			removed = append(removed, p)
		}
	}
	res := &DiffResult{}
	if len(touched) > 0 {
		checked, err := Check(ctx, head, CheckOptions{Options: opts, Paths: touched})
		if err != nil {
			return nil, err
		}
		for _, d := range checked.Documents {
			e := DiffEntry{Change: "changed", Path: d.Path, Kind: d.Kind, Topic: d.Topic, Scope: d.Scope, Title: d.Title, Diagnostics: Diagnostics{}}
			if _, ok := before[d.Path]; !ok {
				e.Change = "added"
			}
			for _, diag := range checked.Diagnostics {
				if diag.Path != d.Path {
					continue
				}
				e.Diagnostics = append(e.Diagnostics, diag)
				if diag.Severity == Error {
					e.Errors++
				} else {
					e.Warnings++
				}
			}
			res.Entries = append(res.Entries, e)
		}
	}
	if len(removed) > 0 {
		checked, err := Check(ctx, base, CheckOptions{Options: opts, Paths: removed})
		if err != nil {
			return nil, err
		}
		for _, d := range checked.Documents {
			res.Entries = append(res.Entries, DiffEntry{Change: "removed", Path: d.Path, Kind: d.Kind, Topic: d.Topic, Scope: d.Scope, Title: d.Title, Diagnostics: Diagnostics{}})
		}
	}
	order := map[string]int{"added": 0, "changed": 1, "removed": 2}
	slices.SortFunc(res.Entries, func(a, b DiffEntry) int {
		return cmp.Or(cmp.Compare(order[a.Change], order[b.Change]), cmp.Compare(a.Path, b.Path))
	})
	if res.Entries == nil {
		res.Entries = []DiffEntry{}
	}
	return res, nil
}

// DiffFormats are the formats of WriteDiff.
var DiffFormats = []string{"text", "md", "json"}

// WriteDiff writes r as text, markdown (ready to post as a pull-request
// comment) or JSON.
func WriteDiff(w io.Writer, format string, r *DiffResult) error {
	switch format {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(r)
	case "text":
		if len(r.Entries) == 0 {
			_, err := fmt.Fprintf(w, "no knowledge changes between %s and %s\n", short(r.Base), short(r.Head))
			return err
		}
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		for _, e := range r.Entries {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", e.Change, e.Kind, e.Topic, e.Scope, e.Title, status(e))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		for _, e := range r.Entries {
			for _, d := range e.Diagnostics {
				if _, err := fmt.Fprintln(w, d); err != nil {
					return err
				}
			}
		}
		return nil
	case "md":
		return writeDiffMarkdown(w, r)
	}
	return fmt.Errorf("unknown format %q (want one of %s)", format, strings.Join(DiffFormats, ", "))
}

func status(e DiffEntry) string {
	switch {
	case e.Change == "removed":
		return "-"
	case e.Errors > 0:
		return fmt.Sprintf("%d %s", e.Errors, plural(e.Errors, "error", "errors"))
	case e.Warnings > 0:
		return fmt.Sprintf("valid, %d %s", e.Warnings, plural(e.Warnings, "warning", "warnings"))
	}
	return "valid"
}

func writeDiffMarkdown(w io.Writer, r *DiffResult) error {
	var b strings.Builder
	if len(r.Entries) == 0 {
		fmt.Fprintf(&b, "### Knowledge changes\n\nNo knowledge changes between `%s` and `%s`.\n", short(r.Base), short(r.Head))
		_, err := io.WriteString(w, b.String())
		return err
	}
	counts := map[string]int{}
	errs := 0
	for _, e := range r.Entries {
		counts[e.Change]++
		errs += e.Errors
	}
	fmt.Fprintf(&b, "### Knowledge changes\n\n%d added, %d changed, %d removed between `%s` and `%s`",
		counts["added"], counts["changed"], counts["removed"], short(r.Base), short(r.Head))
	if errs > 0 {
		fmt.Fprintf(&b, "; **%d %s**", errs, plural(errs, "error", "errors"))
	}
	b.WriteString(".\n\n| Change | Kind | Topic | Scope | Title | Status |\n|---|---|---|---|---|---|\n")
	icon := map[string]string{"added": "➕ added", "changed": "✏️ changed", "removed": "➖ removed"}
	for _, e := range r.Entries {
		st := status(e)
		switch {
		case e.Change == "removed":
			st = "—"
		case e.Errors > 0:
			st = "❌ " + st
		default:
			st = "✅ " + st
		}
		fmt.Fprintf(&b, "| %s | %s | `%s` | %s | %s | %s |\n", icon[e.Change], e.Kind, MarkdownCell(e.Topic), MarkdownCell(e.Scope), MarkdownCell(e.Title), st)
	}
	var diags []string
	for _, e := range r.Entries {
		for _, d := range e.Diagnostics {
			diags = append(diags, d.String())
		}
	}
	if len(diags) > 0 {
		fmt.Fprintf(&b, "\n<details><summary>Diagnostics (%d)</summary>\n\n```\n%s\n```\n\n</details>\n", len(diags), strings.Join(diags, "\n"))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// MarkdownCell makes text safe inside a markdown table cell.
func MarkdownCell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ", "`", "'").Replace(s)
}

func short(rev string) string {
	if len(rev) == 40 {
		return rev[:12]
	}
	return rev
}
