package answer

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/kbqdev/kbq/internal/visible"
	"github.com/kbqdev/kbq/knowledge"
	"github.com/kbqdev/kbq/query"
	"github.com/kbqdev/kbq/query/documents"
)

// WriteJSON writes v as indented JSON, leaving <, > and & as they are.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// WriteSearchMarkdown prints whole chunks under headings, for agents.
func WriteSearchMarkdown(w io.Writer, resp *query.Response) error {
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
		fmt.Fprintf(&b, "`%s:%d-%d`", visible.Line(r.Path), r.Lines[0], r.Lines[1])
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

// ContextJSON is the JSON of kbq context --json and of the servers.
type ContextJSON struct {
	Dir  string `json:"dir"`
	Text string `json:"text"`
	// Sources are the context files included, in order.
	Sources []string `json:"sources"`
	// Index lists the documents of the knowledge index, ranked by IndexBy
	// ("use" or "importance").
	Index     []string `json:"index"`
	IndexBy   string   `json:"index_by,omitempty"`
	Warnings  []string `json:"warnings"`
	Truncated bool     `json:"truncated"`
	// Dropped lists the documents the cut left out in part or whole.
	Dropped []string `json:"dropped,omitempty"`
}

// NewContextJSON is the JSON of res, assembled for dir.
func NewContextJSON(dir string, res *documents.ContextResult) ContextJSON {
	out := ContextJSON{Dir: dir, Text: res.Text, Sources: []string{}, Index: []string{}, IndexBy: res.IndexBy,
		Warnings: []string{}, Truncated: res.Truncated, Dropped: res.Dropped}
	for _, sec := range res.Sections {
		out.Sources = append(out.Sources, sec.Paths...)
	}
	out.Index = append(out.Index, res.Index...)
	out.Warnings = append(out.Warnings, res.Warnings...)
	return out
}

// MetaText shows a document's Meta keys: "owner: platform", one after
// another in the registry's order, joined by " · ".
func MetaText(meta map[string]string) string {
	var parts []string
	for _, k := range knowledge.MetaKeys() {
		if v, ok := meta[k.Name]; ok {
			parts = append(parts, k.Name+": "+v)
		}
	}
	return strings.Join(parts, " · ")
}

// MetaColumns are the columns of the registry's Meta keys that any of
// metas sets, for tables: their names, and each row's values ("-" for
// none).
func MetaColumns(metas []map[string]string) (names []string, cells [][]string) {
	cells = make([][]string, len(metas))
	for _, k := range knowledge.MetaKeys() {
		set := false
		for _, m := range metas {
			_, ok := m[k.Name]
			set = set || ok
		}
		if !set {
			continue
		}
		names = append(names, k.Name)
		for i, m := range metas {
			cells[i] = append(cells[i], cmp.Or(m[k.Name], "-"))
		}
	}
	return names, cells
}
