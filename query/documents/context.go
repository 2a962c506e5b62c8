package documents

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/kbqdev/kbq/artifact"
	"github.com/kbqdev/kbq/internal/units"
	"github.com/kbqdev/kbq/knowledge"
)

// ContextOptions shape the context.
type ContextOptions struct {
	// Wrap wraps the text in <system-reminder> tags.
	Wrap bool
	// IndexSize is how many documents the closing "Knowledge index" lists;
	// 0 leaves it out.
	IndexSize int
	// Uses counts each document's recent uses, by path: the index lists
	// the most used documents in force, or, when none of them was used,
	// those of highest importance.
	Uses map[string]int
	// MaxBytes, when above 0, replaces the total budget: the most the
	// context may hold. MaxLines, when above 0, caps its lines too.
	MaxBytes, MaxLines int
}

// ContextResult is the always-loaded context for a directory.
type ContextResult struct {
	Text string
	// Index lists the paths of the documents of the knowledge index, in
	// its order; IndexBy says what ranked them: "use" or "importance".
	Index   []string
	IndexBy string
	// Warnings say which budgets were exceeded; Truncated is set when the
	// text was cut to fit MaxBytes (the total budget, or the options') and
	// MaxLines, at a block boundary, and Dropped lists the documents cut.
	Warnings  []string
	Truncated bool
	MaxBytes  int
	MaxLines  int
	Dropped   []string
	Sections  []ContextSection
}

// ContextSection is the context of one scope.
type ContextSection struct {
	Scope   string
	Heading string
	Paths   []string
	Bytes   int
}

// Context assembles the context documents in force at dir (relative to the
// repository root): global, project, then each directory scope on the way
// down to dir, each under its own heading, without frontmatter; then, when
// asked, a short index of the documents most worth searching for.
func Context(ctx context.Context, src Source, dir string, opts ContextOptions) (*ContextResult, error) {
	docs, err := src.Documents()
	if err != nil {
		return nil, err
	}
	// Superseded and deprecated documents are left out, here and in the
	// knowledge index (not by a copy of the rest: at 92,000 documents that
	// cost more than the rest of the context).
	retired := src.Header().Retired
	byScope := make(map[string][]artifact.Document)
	for i := range docs {
		d := &docs[i]
		if d.Kind == knowledge.KindContext && knowledge.ScopeContains(d.Scope, dir) {
			if _, gone := retired[d.Path]; !gone {
				byScope[d.Scope] = append(byScope[d.Scope], *d)
			}
		}
	}
	scopes := make([]string, 0, len(byScope))
	for s := range byScope {
		scopes = append(scopes, s)
	}
	slices.SortFunc(scopes, func(a, b string) int {
		return cmp.Or(cmp.Compare(knowledge.ScopeDepth(a), knowledge.ScopeDepth(b)), cmp.Compare(a, b))
	})
	budgets := src.Header().Config.Budgets.Or(artifact.DefaultBudgets)
	res := &ContextResult{MaxBytes: cmp.Or(opts.MaxBytes, budgets.Total), MaxLines: opts.MaxLines}
	var spans []span
	var b strings.Builder
	b.WriteString("## Internal Knowledge\n")
	for _, s := range scopes {
		sec := ContextSection{Scope: s, Heading: contextHeading(s)}
		var bodies []string
		for _, d := range contextOrder(byScope[s]) {
			doc, err := load(ctx, src, d)
			if err != nil {
				return nil, err
			}
			body := strings.TrimSpace(stripComments(shiftHeadings(doc.Body, 3, d.Headings)))
			if body == "" || slices.Contains(bodies, body) {
				continue // AGENTS.md and CLAUDE.md are often copies
			}
			bodies = append(bodies, body)
			sec.Paths = append(sec.Paths, d.Path)
		}
		if len(bodies) == 0 {
			continue
		}
		text := strings.Join(bodies, "\n\n")
		sec.Bytes = len(text)
		if budget := budgets.Of(s); sec.Bytes > budget {
			res.Warnings = append(res.Warnings, fmt.Sprintf("%s is %.1f KiB, over its %s budget (%s)",
				contextName(s), kib(sec.Bytes), units.Bytes(int64(budget)), strings.Join(sec.Paths, ", ")))
		}
		spans = append(spans, span{start: b.Len(), paths: sec.Paths})
		fmt.Fprintf(&b, "\n### %s\n\n%s\n", sec.Heading, text)
		res.Sections = append(res.Sections, sec)
	}
	if index := knowledgeIndex(docs, dir, retired, opts); len(index) > 0 && len(res.Sections) > 0 {
		// The index counts in the budgets: past the limit it is cut first.
		spans = append(spans, span{start: b.Len()})
		b.WriteString("\n### Knowledge index\n\n")
		res.IndexBy = "use"
		if opts.Uses == nil || opts.Uses[index[0].Path] == 0 {
			res.IndexBy = "importance"
		}
		intro := "Most used lately"
		if res.IndexBy == "importance" {
			intro = "Most important"
		}
		fmt.Fprintf(&b, "%s here; search the knowledge for more:\n\n", intro)
		for _, d := range index {
			fmt.Fprintf(&b, "- %s", d.Topic)
			if len(d.Tags) > 0 {
				fmt.Fprintf(&b, " [%s]", strings.Join(d.Tags, ", "))
			}
			if d.Title != "" && d.Title != d.Topic {
				fmt.Fprintf(&b, ": %s", oneLine(d.Title))
			}
			b.WriteString("\n")
			res.Index = append(res.Index, d.Path)
		}
	}
	text := b.String()
	if len(res.Sections) == 0 {
		text = ""
	}
	// An agent's own limit (--for) cuts; only kbq's budget warns short of it.
	if warn := budgets.Total / 2; opts.MaxBytes == 0 && len(text) > warn {
		res.Warnings = append(res.Warnings, fmt.Sprintf("context is %.1f KiB, over the %s that agents load comfortably", kib(len(text)), units.Bytes(int64(warn))))
	}
	if cut, dropped := cutContext(text, spans, res.MaxBytes, res.MaxLines); len(cut) != len(text) || dropped != nil {
		text, res.Dropped, res.Truncated = cut, dropped, true
	}
	if opts.Wrap && text != "" {
		text = "<system-reminder>\n" + neutralizeReminders(text) + "\n</system-reminder>\n"
	}
	res.Text = text
	return res, nil
}

// knowledgeIndex picks the documents in force at dir (no context, none
// retired or shadowed there) that the context's index lists: by recent
// use, or by importance when none of them was used. It keeps the few it
// lists as it goes rather than a copy of every document in force: at
// 92,000 documents the copies cost more than the rest of kbq context.
func knowledgeIndex(docs []artifact.Document, dir string, retired map[string]string, opts ContextOptions) []artifact.Document {
	if opts.IndexSize <= 0 {
		return nil
	}
	inForce := func(d *artifact.Document) bool {
		if _, gone := retired[d.Path]; gone {
			return false
		}
		return d.Kind != knowledge.KindContext && knowledge.ScopeContains(d.Scope, dir) &&
			!slices.ContainsFunc(d.ShadowedBy, func(s string) bool { return knowledge.ScopeContains(s, dir) })
	}
	used := false
	for i := range docs {
		if opts.Uses[docs[i].Path] > 0 && inForce(&docs[i]) {
			used = true
			break
		}
	}
	weight := func(d *artifact.Document) float64 {
		if used {
			return float64(opts.Uses[d.Path])
		}
		if d.Importance == nil {
			return 0
		}
		return *d.Importance
	}
	// before orders the index: the heavier first, then by path.
	before := func(a, b *artifact.Document) bool {
		wa, wb := weight(a), weight(b)
		return wa > wb || wa == wb && a.Path < b.Path
	}
	var top []*artifact.Document // the best so far, in order
	for i := range docs {
		d := &docs[i]
		if weight(d) <= 0 || len(top) == opts.IndexSize && !before(d, top[len(top)-1]) || !inForce(d) {
			continue
		}
		at, _ := slices.BinarySearchFunc(top, d, func(t, d *artifact.Document) int {
			if before(t, d) {
				return -1
			}
			return 1
		})
		if len(top) < opts.IndexSize {
			top = append(top, nil)
		}
		copy(top[at+1:], top[at:len(top)-1])
		top[at] = d
	}
	out := make([]artifact.Document, len(top))
	for i, d := range top {
		out[i] = *d
	}
	return out
}

// oneLine keeps the first line of s, at most 100 bytes of it.
func oneLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 100 {
		s = truncateUTF8(s, 99) + "…"
	}
	return strings.TrimSpace(s)
}

// shiftHeadings moves the headings of markdown text down by levels (at
// most to level 6), so that a document's "# Title" sits under the "###"
// heading of its scope rather than above it. Setext headings (a line
// underlined with === or ---) become ATX headings; fenced code is left as
// it is.
// stripComments removes HTML comments (<!-- ... -->) from markdown outside
// fenced code: notes to the file's authors, such as kbc init's template
// writes, that an agent should not read as context. A line the comments
// took whole goes too, and runs of blank lines they leave become one.
func stripComments(text string) string {
	if !strings.Contains(text, "<!--") {
		return text
	}
	lines := strings.Split(text, "\n")
	out := make([]string, 0, len(lines))
	fence, inComment := "", false
	blank := false
	emit := func(line string, wasText bool) {
		if strings.TrimSpace(line) == "" {
			if !wasText || blank {
				return
			}
			blank = true
		} else {
			blank = false
		}
		out = append(out, line)
	}
	for _, line := range lines {
		trimmed := strings.TrimLeft(line, " ")
		if fence != "" || !inComment && len(line)-len(trimmed) < 4 && (strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~")) {
			switch {
			case fence == "":
				fence = trimmed[:3]
			case strings.HasPrefix(trimmed, fence) && strings.Trim(trimmed, fence[:1]) == "":
				fence = ""
			}
			emit(line, true)
			continue
		}
		var kept strings.Builder
		rest := line
		for rest != "" {
			if inComment {
				end := strings.Index(rest, "-->")
				if end < 0 {
					rest = ""
					break
				}
				rest, inComment = rest[end+3:], false
				continue
			}
			start := strings.Index(rest, "<!--")
			if start < 0 {
				kept.WriteString(rest)
				break
			}
			kept.WriteString(rest[:start])
			rest, inComment = rest[start+4:], true
		}
		emit(strings.TrimRight(kept.String(), " "), kept.Len() > 0 || strings.TrimSpace(line) == "")
	}
	return strings.Join(out, "\n")
}

// shiftHeadings moves the headings of a context document levels down,
// under the context's own: those the build recorded as the markdown
// parser read them (artifact.Document.Headings), else, for an artifact
// that recorded none, those a line scan finds outside fenced code.
func shiftHeadings(text string, levels int, recorded []uint32) string {
	if len(recorded) == 0 {
		return scanShiftHeadings(text, levels)
	}
	lines := strings.Split(text, "\n")
	for _, h := range recorded {
		level, setext, n, line := int(h&7), h>>3&1 == 1, int(h>>4&15), int(h>>8)
		if level == 0 || line >= len(lines) {
			continue
		}
		if !setext {
			trimmed := strings.TrimLeft(lines[line], " ")
			if l := atxLevel(trimmed); l > 0 {
				lines[line] = strings.Repeat("#", min(l+levels, 6)) + trimmed[l:]
			}
			continue
		}
		under := line + n
		if under >= len(lines) || n < 1 {
			continue
		}
		words := make([]string, 0, n)
		for _, l := range lines[line:under] {
			words = append(words, strings.TrimSpace(l))
		}
		lines[line] = strings.Repeat("#", min(level+levels, 6)) + " " + strings.Join(words, " ")
		for i := line + 1; i <= under; i++ {
			lines[i] = "\x00" // dropped below
		}
	}
	out := lines[:0]
	for _, l := range lines {
		if l != "\x00" {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// scanShiftHeadings is shiftHeadings by a line scan: fences close only
// with a run of their own character at least as long as the opening.
func scanShiftHeadings(text string, levels int) string {
	lines := strings.Split(text, "\n")
	out := make([]string, 0, len(lines))
	fence := ""
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		trimmed := strings.TrimLeft(line, " ")
		indent := len(line) - len(trimmed)
		if fence != "" {
			if indent < 4 && strings.HasPrefix(trimmed, fence) && strings.TrimRight(strings.TrimLeft(trimmed, fence[:1]), " \t") == "" {
				fence = ""
			}
			out = append(out, line)
			continue
		}
		if indent < 4 && (strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~")) {
			n := len(trimmed) - len(strings.TrimLeft(trimmed, trimmed[:1]))
			fence = trimmed[:n]
			out = append(out, line)
			continue
		}
		if level := atxLevel(trimmed); indent < 4 && level > 0 {
			out = append(out, strings.Repeat("#", min(level+levels, 6))+trimmed[level:])
			continue
		}
		if next := i + 1; indent < 4 && next < len(lines) && strings.TrimSpace(line) != "" && !strings.HasPrefix(trimmed, ">") {
			if u := strings.TrimSpace(lines[next]); len(u) > 0 && (strings.Trim(u, "=") == "" || strings.Trim(u, "-") == "" && len(u) >= 2) {
				level := 1
				if u[0] == '-' {
					level = 2
				}
				out = append(out, strings.Repeat("#", min(level+levels, 6))+" "+strings.TrimSpace(line))
				i = next
				continue
			}
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}

// atxLevel is the level of an ATX heading line ("## Title"), or 0.
func atxLevel(line string) int {
	n := 0
	for n < len(line) && line[n] == '#' {
		n++
	}
	if n == 0 || n > 6 || n < len(line) && line[n] != ' ' && line[n] != '\t' {
		return 0
	}
	return n
}

func contextHeading(scope string) string {
	switch scope {
	case knowledge.ScopeGlobal:
		return "Global Context"
	case knowledge.ScopeOrg:
		return "Organisation Context"
	case knowledge.ScopeProject:
		return "Project Context"
	}
	dir, _ := knowledge.ScopeDir(scope)
	return "Directory Context: " + dir
}

// contextName names a scope's context in messages.
func contextName(scope string) string {
	switch scope {
	case knowledge.ScopeGlobal:
		return "global context"
	case knowledge.ScopeOrg:
		return "organisation context"
	case knowledge.ScopeProject:
		return "project context"
	}
	dir, _ := knowledge.ScopeDir(scope)
	return "context of " + dir
}

// contextOrder puts .kb/context.md before the agent files of the same scope.
func contextOrder(docs []artifact.Document) []artifact.Document {
	out := slices.Clone(docs)
	slices.SortFunc(out, func(a, b artifact.Document) int {
		ak, bk := a.Topic != "context", b.Topic != "context"
		if ak != bk {
			if ak {
				return 1
			}
			return -1
		}
		return cmp.Compare(a.Path, b.Path)
	})
	return out
}

func kib(n int) float64 { return float64(n) / 1024 }

// truncateUTF8 cuts s to at most n bytes without splitting a character.
func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
