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
			if _, err := fmt.Fprintf(w, "no knowledge changes between %s and %s\n", shortRev(r.Base), shortRev(r.Head)); err != nil {
				return err
			}
			return writeStaleText(w, r.Stale)
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
		return writeStaleText(w, r.Stale)
	case "md":
		return writeDiffMarkdown(w, r)
	}
	return fmt.Errorf("unknown format %q (want one of %s)", format, strings.Join(diffFormats, ", "))
}

// writeStaleText lists the knowledge that may need an update, one
// reference a line, as path:line:col like diagnostics.
func writeStaleText(w io.Writer, stale []compiler.StaleEntry) error {
	if len(stale) == 0 {
		return nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n%d %s may need an update: %s names what the change touches\n", len(stale),
		plural(len(stale), "document", "documents"), plural(len(stale), "it", "each"))
	for _, e := range stale {
		for _, ref := range e.References {
			fmt.Fprintf(&b, "%s:%d:%d: %s\n", e.Path, ref.Line, ref.Col, ref)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeStaleMarkdown is writeStaleText for a pull-request comment.
func writeStaleMarkdown(b *strings.Builder, stale []compiler.StaleEntry) {
	if len(stale) == 0 {
		return
	}
	fmt.Fprintf(b, "\n#### May need an update\n\n%d unchanged %s %s what this change modifies, renames or deletes:\n\n| Document | Names |\n|---|---|\n",
		len(stale), plural(len(stale), "document", "documents"), plural(len(stale), "names", "name"))
	for _, e := range stale {
		names := make([]string, len(e.References))
		for i, ref := range e.References {
			names[i] = fmt.Sprintf("`%s` (line %d) %s", markdownCell(ref.Name), ref.Line, ref.Change)
			if ref.To != "" {
				names[i] += fmt.Sprintf(" to `%s`", markdownCell(ref.To))
			}
		}
		title := e.Title
		if title == "" {
			title = e.Path
		}
		fmt.Fprintf(b, "| %s (`%s`) | %s |\n", markdownText(title), markdownCell(e.Path), strings.Join(names, "<br>"))
	}
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
		writeStaleMarkdown(&b, r.Stale)
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
		fmt.Fprintf(&b, "| %s | %s | `%s` | %s | %s | %s |\n", icon[e.Change], e.Kind, markdownCell(e.Topic), markdownText(e.Scope), markdownText(e.Title), st)
	}
	var diags []string
	for _, e := range r.Entries {
		for _, d := range e.Diagnostics {
			diags = append(diags, d.String())
		}
	}
	if len(diags) > 0 {
		text := strings.Join(diags, "\n")
		fence := strings.Repeat("`", max(3, longestRun(text, '`')+1))
		fmt.Fprintf(&b, "\n<details><summary>Diagnostics (%d)</summary>\n\n%s\n%s\n%s\n\n</details>\n", len(diags), fence, text, fence)
	}
	writeStaleMarkdown(&b, r.Stale)
	_, err := io.WriteString(w, b.String())
	return err
}

// markdownCell makes text safe inside a code span of a markdown table
// cell, where mentions and HTML are not read.
func markdownCell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ", "\r", " ", "`", "'").Replace(s)
}

// markdownText makes text of a repository (a title) safe as plain text
// of a pull-request comment's table cell: it stays one cell, shows as
// written, and cannot mention (@team), link, embed an image or carry
// HTML.
var markdownText = strings.NewReplacer(
	"|", `\|`, "\n", " ", "\r", " ", "`", "'", "\\", `\\`,
	"<", "&lt;", ">", "&gt;", "&", "&amp;", "@", "&#64;", "#", "&#35;",
	"[", `\[`, "]", `\]`, "(", `\(`, ")", `\)`, "!", `\!`, "*", `\*`, "_", `\_`, "~", `\~`,
).Replace

// longestRun is the length of the longest run of c in s.
func longestRun(s string, c byte) int {
	best, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			run++
			best = max(best, run)
		} else {
			run = 0
		}
	}
	return best
}

func shortRev(rev string) string {
	if len(rev) == 40 {
		return rev[:12]
	}
	return rev
}
