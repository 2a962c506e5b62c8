package compiler

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/kbqdev/kbq/artifact"
	"github.com/kbqdev/kbq/knowledge"
)

func parseTopic(text string) *document {
	return parseDocument(input{path: ".kb/x.md", display: ".kb/x.md", data: []byte(text),
		loc: knowledge.Location{Kind: knowledge.KindTopic, Scope: knowledge.ScopeProject, Topic: "x"}})
}

func diagnosticsOf(d *document) string {
	var out []string
	for _, g := range d.diags {
		out = append(out, fmt.Sprintf("%d:%d %s: %s", g.Line, g.Col, g.Severity, g.Message))
	}
	return strings.Join(out, "\n")
}

// Markup that multiplies the work of a build is capped, with a diagnostic
// that says so: tags, the size of the frontmatter, and headings.
func TestAmplificationIsCapped(t *testing.T) {
	many := func(n int, f func(int) string) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = f(i)
		}
		return out
	}
	tags := many(150, func(i int) string { return fmt.Sprintf("t%d", i) })

	d := parseTopic("---\ntitle: X\ntags: [" + strings.Join(tags, ", ") + "]\n---\nbody\n")
	if len(d.Tags) != maxTags || d.Tags[99] != "t99" {
		t.Errorf("a list of 150 tags kept %d", len(d.Tags))
	}
	if want := "3:7 warning: tags: over 100 tags, the most a document may have: the first 100 are kept"; diagnosticsOf(d) != want {
		t.Errorf("diagnostics %q, want %q", diagnosticsOf(d), want)
	}

	d = parseTopic("tags: " + strings.Join(tags, ",") + "\n\nbody\n")
	if len(d.Tags) != maxTags || !strings.Contains(diagnosticsOf(d), "1:1 warning: over 100 tags") {
		t.Errorf("a tags line of 150 kept %d: %s", len(d.Tags), diagnosticsOf(d))
	}

	d = parseTopic("---\ntags: [" + strings.Join(many(20000, func(i int) string { return fmt.Sprintf("tag%d", i) }), ", ") + "]\n---\nbody\n")
	if !strings.Contains(diagnosticsOf(d), "2:1 error: frontmatter is 1") || !strings.Contains(diagnosticsOf(d), "over the 64 KiB it may hold") {
		t.Errorf("a frontmatter of 170 KB: %s", diagnosticsOf(d))
	}

	heads := strings.Join(many(maxHeadings+1, func(i int) string { return fmt.Sprintf("# h%d\n\ntext %d\n", i, i) }), "\n")
	d = parseTopic(heads)
	if !strings.Contains(diagnosticsOf(d), "1:1 warning: over 2000 headings: the document is chunked by size alone") {
		t.Errorf("%d headings: %s", maxHeadings+1, diagnosticsOf(d))
	}
	for _, c := range d.chunks {
		if c.heading != "" {
			t.Fatalf("a chunk kept the heading %q", c.heading)
		}
	}
	covered := 0
	for _, c := range d.chunks {
		covered = max(covered, c.end)
	}
	if covered != len(heads) {
		t.Errorf("the chunks cover %d of %d bytes", covered, len(heads))
	}
	d = parseTopic(strings.Join(many(maxHeadings, func(i int) string { return fmt.Sprintf("# h%d\n\ntext %d\n", i, i) }), "\n"))
	if diagnosticsOf(d) != "" {
		t.Errorf("%d headings: %s", maxHeadings, diagnosticsOf(d))
	}

	// A heading of 200 KB is the title and the trail of every chunk
	// under it only as far as maxHeadingText (a rune is not split); its
	// words stay in the text.
	long := strings.Repeat("é", 1) + strings.Join(many(20000, func(i int) string { return fmt.Sprintf("w%d", i) }), " ")
	d = parseTopic("intro\n\n# " + long + "\n\n" + strings.Repeat("Body text of the section. ", 4000) + "\n\n## Next\n\nmore\n")
	if want := "3:1 warning: a heading over 512 bytes: the title and the chunks under it carry its first 512; shorten it"; diagnosticsOf(d) != want {
		t.Errorf("diagnostics %q, want %q", diagnosticsOf(d), want)
	}
	if len(d.chunks) < 3 {
		t.Fatalf("%d chunks", len(d.chunks))
	}
	for _, c := range d.chunks {
		if len(c.heading) > 2*maxHeadingText || !utf8.ValidString(c.heading) {
			t.Fatalf("a chunk's heading of %d bytes (valid UTF-8: %v)", len(c.heading), utf8.ValidString(c.heading))
		}
	}
	if !strings.HasPrefix(d.Title, "éw0 w1 ") || !strings.HasSuffix(d.Title, "…") || len(d.Title) > maxHeadingText+len("…") {
		t.Errorf("title of %d bytes: %.40q…", len(d.Title), d.Title)
	}
	d = parseTopic("---\ntitle: " + long[:5000] + "\n---\n# Short\n\ntext\n")
	if want := "2:8 warning: title: is 4999 bytes: the first 512 are kept"; !strings.HasPrefix(diagnosticsOf(d), want) || !strings.HasSuffix(d.Title, "…") || len(d.Title) > maxTitle+len("…") {
		t.Errorf("a title of 4999 bytes kept %d: %s", len(d.Title), diagnosticsOf(d))
	}
	page := parseDocument(input{path: ".kb/p.html", display: ".kb/p.html", data: []byte("<html><head><title>" + long[:5000] + "</title></head><body><p>Hello.</p></body></html>"),
		loc: knowledge.Location{Kind: knowledge.KindTopic, Scope: knowledge.ScopeProject, Topic: "p"}})
	if want := "1:1 warning: <title> is 4999 bytes: the first 512 are kept"; !strings.HasPrefix(diagnosticsOf(page), want) || len(page.Title) > maxTitle+len("…") {
		t.Errorf("an HTML title of 4999 bytes kept %d: %s", len(page.Title), diagnosticsOf(page))
	}
	two := parseTopic("# " + long + "\n\ntext\n\n# " + long + "2\n\ntext\n")
	if !strings.Contains(diagnosticsOf(two), "1:1 warning: 2 headings, the first here, over 512 bytes") {
		t.Errorf("two long headings: %s", diagnosticsOf(two))
	}
}

// A document of more distinct words than maxDocumentWords says so, and
// indexes its first ones only, the same in every build.
func TestDocumentVocabularyIsCapped(t *testing.T) {
	var b strings.Builder
	b.WriteString("# Words\n\n")
	for i := range maxDocumentWords + 10 {
		fmt.Fprintf(&b, "word%d ", i)
		if i%20 == 19 {
			b.WriteString("\n")
		}
	}
	d := parseTopic(b.String())
	if !d.tooManyWords || !strings.Contains(diagnosticsOf(d), "warning: over 100000 distinct words") {
		t.Fatalf("diagnostics %q", diagnosticsOf(d))
	}
	if parseTopic("# Short\n\n" + strings.Repeat("the same words again ", 30000)).tooManyWords {
		t.Error("a long text of few words is flagged")
	}

	// The first three distinct terms, whatever the builder learned before.
	termsOf := func(fb *fieldBuilder) string {
		fb.startDocument(3)
		var terms []string
		for _, ft := range fb.analyze([]byte("alpha bravo charlie known delta alpha echo"), nil).terms {
			terms = append(terms, string(ft.term))
		}
		return strings.Join(terms, " ")
	}
	fresh, fb := newFieldBuilder(artifact.DefaultAnalysis), newFieldBuilder(artifact.DefaultAnalysis)
	fb.analyze([]byte("known delta"), nil)
	if got, other := termsOf(fb), termsOf(fresh); got != "alpha bravo charli" || got != other {
		t.Errorf("with room for 3 terms: %q, and from a fresh builder %q", got, other)
	}
	fb.startDocument(0)
	if got := fb.analyze([]byte("delta echo"), nil); len(got.terms) != 2 {
		t.Errorf("the next document, without a limit, indexed %d of 2 terms", len(got.terms))
	}
}
