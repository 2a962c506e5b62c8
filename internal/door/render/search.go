package render

import (
	"cmp"
	"encoding/csv"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/kbqdev/kbq/internal/visible"
	"github.com/kbqdev/kbq/query"
)

// SearchMarkdown prints whole chunks under headings, for agents.
func SearchMarkdown(w io.Writer, resp *query.Response) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# Knowledge search: %s\n", visible.Line(resp.Query))
	if len(resp.Results) == 0 {
		b.WriteString("\nNo results.\n")
	}
	for i, r := range resp.Results {
		title := r.Title
		if title == "" {
			title = r.Topic
		}
		fmt.Fprintf(&b, "\n## %d. %s\n\n", i+1, visible.Line(title))
		fmt.Fprintf(&b, "`%s:%d-%d`", visible.Line(repoPath(r)), r.Lines[0], r.Lines[1])
		if r.Heading != "" {
			fmt.Fprintf(&b, " · %s", visible.Line(r.Heading))
		}
		fmt.Fprintf(&b, " · %s · scope %s", r.Kind, r.Scope)
		if len(r.Tags) > 0 {
			fmt.Fprintf(&b, " · tags: %s", visible.Line(strings.Join(r.Tags, ", ")))
		}
		if meta := MetaText(r.Meta); meta != "" {
			b.WriteString(" · " + visible.Line(meta))
		}
		switch {
		case r.Uncommitted:
			b.WriteString(" · uncommitted")
		case len(r.Updated) >= len("2006-01-02"):
			fmt.Fprintf(&b, " · updated %s by %s", r.Updated[:len("2006-01-02")], visible.Line(cmp.Or(r.Author, "?")))
		}
		if len(r.Disputed) > 0 {
			fmt.Fprintf(&b, " · **disputed** by %s", visible.Line(strings.Join(r.Disputed, ", ")))
		}
		b.WriteString("\n\n")
		b.WriteString(fence(visible.Text(strings.TrimRight(r.Content, "\n"))))
		if r.Trimmed {
			b.WriteString("\n\n*(trimmed to fit the token budget; `kbq get " + r.Path + "` has the whole document)*")
		}
		b.WriteString("\n")
	}
	if resp.Trimmed {
		b.WriteString("\n*Results were trimmed to fit the token budget.*\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// fence quotes markdown content so that its headings do not break the
// result structure: as a block quote.
func fence(content string) string {
	lines := strings.Split(content, "\n")
	for i, l := range lines {
		if l == "" {
			lines[i] = ">"
		} else {
			lines[i] = "> " + l
		}
	}
	return strings.Join(lines, "\n")
}

// SearchCSV writes one row per result; tags are joined with ";".
func SearchCSV(w io.Writer, results []query.Result) error {
	repos := slices.ContainsFunc(results, func(r query.Result) bool { return r.Repo != "" })
	cw := csv.NewWriter(w)
	head := append([]string{"path", "topic", "kind", "scope", "heading", "start_line", "end_line", "score", "tags", "updated", "author"}, metaHeader()...)
	if repos {
		head = append(head, "repo")
	}
	cw.Write(head)
	for _, r := range results {
		updated := r.Updated
		if r.Uncommitted {
			updated = "uncommitted"
		}
		row := append([]string{r.Path, r.Topic, r.Kind, r.Scope, r.Heading, strconv.Itoa(r.Lines[0]), strconv.Itoa(r.Lines[1]),
			strconv.FormatFloat(r.Score, 'f', 4, 64), strings.Join(r.Tags, ";"), updated, r.Author}, metaCells(r.Meta)...)
		if repos {
			row = append(row, r.Repo)
		}
		cw.Write(visibleCells(row...))
	}
	cw.Flush()
	return cw.Error()
}

// ANSI styles, as ripgrep colours them.
const (
	styleReset = "\x1b[0m"
	stylePath  = "\x1b[35m"
	styleLines = "\x1b[32m"
	styleMatch = "\x1b[1;31m"
	styleDim   = "\x1b[2m"
)

// SearchText prints path:lines, heading trail and a snippet per result.
func SearchText(w io.Writer, resp *query.Response, color bool) error {
	paint := func(style, text string) string {
		if !color || text == "" {
			return text
		}
		return style + text + styleReset
	}
	var b strings.Builder
	for i, r := range resp.Results {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "%s:%s", paint(stylePath, visible.Line(repoPath(r))), paint(styleLines, fmt.Sprintf("%d-%d", r.Lines[0], r.Lines[1])))
		// The heading trail places the chunk; a chunk before any heading
		// is placed by its document's title. A memory's title is its first
		// words, which the snippet already shows, and a context file's is
		// its kind.
		trail := r.Heading
		if trail == "" && r.Kind != "memory" && r.Kind != "context" {
			trail = r.Title
		}
		if trail != "" {
			fmt.Fprintf(&b, "  %s", visible.Line(trail))
		}
		meta := r.Kind
		if len(r.Tags) > 0 {
			meta += ", " + strings.Join(r.Tags, " ")
		}
		place := visible.Line(r.Scope)
		if r.Updated != "" || r.Uncommitted {
			place += " · " + UpdatedCell(r.Age)
		}
		if m := MetaText(r.Meta); m != "" {
			place += " · " + visible.Line(m)
		}
		fmt.Fprintf(&b, "  %s\n", paint(styleDim, fmt.Sprintf("[%s · %s] %.2f", visible.Line(meta), place, r.Score)))
		if len(r.Disputed) > 0 {
			fmt.Fprintf(&b, "    %s\n", paint(styleMatch, "disputed by "+visible.Line(strings.Join(r.Disputed, ", "))))
		}
		fmt.Fprintf(&b, "    %s\n", highlight(r.Snippet, r.Highlights, func(t string) string { return paint(styleMatch, t) }))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// highlight marks the ranges of text with mark; what it prints of text
// is escaped to stay on one line and out of the terminal's control.
func highlight(text string, ranges [][2]int, mark func(string) string) string {
	var b strings.Builder
	at := 0
	for _, r := range ranges {
		if r[0] < at || r[1] > len(text) || r[0] >= r[1] {
			continue
		}
		b.WriteString(visible.Line(text[at:r[0]]))
		b.WriteString(mark(visible.Line(text[r[0]:r[1]])))
		at = r[1]
	}
	b.WriteString(visible.Line(text[at:]))
	return b.String()
}

// repoPath is a result's path, after its repository's name when several
// were searched: github.com/org/api:.kb/deploy.md.
func repoPath(r query.Result) string {
	if r.Repo == "" {
		return r.Path
	}
	return r.Repo + ":" + r.Path
}
