package kbccli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/kbqdev/kbq/compiler"
)

// diffFormats are the formats of writeDiff.
var diffFormats = []string{"text", "md", "json"}

// writeDiff writes r as text, markdown (ready to post as a pull-request
// comment) or JSON.
func writeDiff(w io.Writer, format string, r *compiler.DiffResult) error {
	switch format {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(r)
	case "text":
		if len(r.Entries) == 0 {
			_, err := fmt.Fprintf(w, "no knowledge changes between %s and %s\n", shortRev(r.Base), shortRev(r.Head))
			return err
		}
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		for _, e := range r.Entries {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", e.Change, e.Kind, e.Topic, e.Scope, e.Title, diffStatus(e))
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
	return fmt.Errorf("unknown format %q (want one of %s)", format, strings.Join(diffFormats, ", "))
}

func diffStatus(e compiler.DiffEntry) string {
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

func writeDiffMarkdown(w io.Writer, r *compiler.DiffResult) error {
	var b strings.Builder
	if len(r.Entries) == 0 {
		fmt.Fprintf(&b, "### Knowledge changes\n\nNo knowledge changes between `%s` and `%s`.\n", shortRev(r.Base), shortRev(r.Head))
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
		counts["added"], counts["changed"], counts["removed"], shortRev(r.Base), shortRev(r.Head))
	if errs > 0 {
		fmt.Fprintf(&b, "; **%d %s**", errs, plural(errs, "error", "errors"))
	}
	b.WriteString(".\n\n| Change | Kind | Topic | Scope | Title | Status |\n|---|---|---|---|---|---|\n")
	icon := map[string]string{"added": "➕ added", "changed": "✏️ changed", "removed": "➖ removed"}
	for _, e := range r.Entries {
		st := diffStatus(e)
		switch {
		case e.Change == "removed":
			st = "—"
		case e.Errors > 0:
			st = "❌ " + st
		default:
			st = "✅ " + st
		}
		fmt.Fprintf(&b, "| %s | %s | `%s` | %s | %s | %s |\n", icon[e.Change], e.Kind, markdownCell(e.Topic), markdownCell(e.Scope), markdownCell(e.Title), st)
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

// markdownCell makes text safe inside a markdown table cell.
func markdownCell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ", "`", "'").Replace(s)
}

func shortRev(rev string) string {
	if len(rev) == 40 {
		return rev[:12]
	}
	return rev
}
