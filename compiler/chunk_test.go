package compiler

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"

	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/util"
)

func chunksOf(t testing.TB, text string) ([]chunk, *source, int) {
	t.Helper()
	src := newSource([]byte(text))
	fm := splitFrontmatter(src, false, func(int, int, string) {})
	chunks, _, _ := chunkBody(src, fm.body)
	return chunks, src, fm.body
}

func TestChunkHeadingTrails(t *testing.T) {
	var b strings.Builder
	b.WriteString("---\ntitle: T\n---\nIntro paragraph.\n\n# Guide\n\n")
	section := func(h, word string) {
		b.WriteString(h + "\n\n")
		for range 40 {
			b.WriteString(word + " text that makes this section long enough to stand alone.\n")
		}
		b.WriteString("\n")
	}
	section("## Install", "install")
	section("### On Linux", "linux")
	section("## Deploy [with links](x.md) and `code`", "deploy")
	section("Rollback\n--------", "rollback")
	chunks, src, _ := chunksOf(t, b.String())
	var got []string
	for _, c := range chunks {
		got = append(got, c.heading)
	}
	// The short intro and the empty "Guide" section merge into Install.
	want := []string{"Guide > Install", "Guide > Install > On Linux",
		"Guide > Deploy with links and code", "Guide > Rollback"}
	if strings.Join(got, " | ") != strings.Join(want, " | ") {
		t.Errorf("trails:\n got %q\nwant %q", got, want)
	}
	// Each section starts at its heading line.
	if !strings.HasPrefix(string(src.Data[chunks[1].start:]), "### On Linux") {
		t.Errorf("chunk 1 starts with %q", string(src.Data[chunks[1].start:chunks[1].start+20]))
	}
}

// A heading's code spans keep their text, angle brackets and emphasis
// markers included; outside them, HTML tags and markers go.
func TestHeadingTextKeepsCodeSpans(t *testing.T) {
	for md, want := range map[string]string{
		"## `<scrape_config>`":                       "<scrape_config>",
		"## The `<tls_config>` *block*":              "The <tls_config> block",
		"## ``a ` b`` and <b>bold</b>":               "a ` b and bold",
		"## `` `<x>` ``":                             "`<x>`",
		"## Unclosed `code <b>x</b>":                 "Unclosed code x",
		"## `__init__` and _emphasis_":               "__init__ and emphasis",
		"## [`<remote_write>`](#remote_write) links": "<remote_write> links",
	} {
		chunks, _, _ := chunksOf(t, md+"\n\nSome text under it.\n")
		if len(chunks) != 1 || chunks[0].heading != want {
			var got []string
			for _, c := range chunks {
				got = append(got, c.heading)
			}
			t.Errorf("%s: headings %q, want %q", md, got, want)
		}
	}
}

func TestChunkMergesSmallSections(t *testing.T) {
	chunks, _, _ := chunksOf(t, "# Tool\n\n## Parameters\n\n### -Path\n\nThe path.\n\n### -Filter\n\nA filter.\n")
	if len(chunks) != 1 || chunks[0].heading != "Tool > Parameters > -Path · -Filter" {
		t.Errorf("chunks = %+v, want one chunk under Tool > Parameters, naming both", chunks)
	}
	// Sections that share no heading: the chunk names each, never one
	// section's text under the other's heading alone.
	chunks, _, _ = chunksOf(t, "## Reloading configuration\n\nSend SIGHUP to reload.\n\n## Shutting down\n\n"+strings.Repeat("Stop the server with SIGTERM; it drains connections first. ", 5)+"\n")
	if len(chunks) != 1 || chunks[0].heading != "Reloading configuration · Shutting down" {
		t.Errorf("chunks = %+v, want one chunk naming both sections", chunks)
	}
}

func TestChunkSplitsLongSections(t *testing.T) {
	var b strings.Builder
	b.WriteString("# Long\n\n")
	for i := range 60 {
		b.WriteString(strings.Repeat("word ", 20) + "end of paragraph.\n\n")
		if i == 30 {
			b.WriteString("```go\n" + strings.Repeat("code line\n", 10) + "```\n\n")
		}
	}
	chunks, src, _ := chunksOf(t, b.String())
	if len(chunks) < 3 {
		t.Fatalf("%d chunks, want a long section split", len(chunks))
	}
	for i, c := range chunks {
		if c.end-c.start > maxChunk+maxOverlap {
			t.Errorf("chunk %d is %d bytes", i, c.end-c.start)
		}
		if c.heading != "Long" {
			t.Errorf("chunk %d heading %q", i, c.heading)
		}
		// Cuts fall on line starts, never inside the fenced block.
		if c.start > 0 && src.Data[c.start-1] != '\n' {
			t.Errorf("chunk %d starts mid-line", i)
		}
		if strings.HasPrefix(string(src.Data[c.start:]), "code line") {
			t.Errorf("chunk %d starts inside the code block", i)
		}
	}
	if chunks[1].start >= chunks[0].end {
		t.Errorf("pieces of a split section should overlap: %d >= %d", chunks[1].start, chunks[0].end)
	}
}

func TestChunkOverlongLine(t *testing.T) {
	text := "# H\n\n" + strings.Repeat("é", 5000) + "\n"
	chunks, src, _ := chunksOf(t, text)
	checkCover(t, chunks, src, 0)
	for _, c := range chunks {
		if c.end-c.start > maxChunk {
			t.Errorf("chunk of %d bytes", c.end-c.start)
		}
	}
}

func TestChunkEmptyBody(t *testing.T) {
	chunks, _, body := chunksOf(t, "---\nid: 1\n---\n")
	if len(chunks) != 1 || chunks[0].start != body || chunks[0].end != body {
		t.Errorf("chunks = %+v, want one empty chunk at %d", chunks, body)
	}
}

// checkCover asserts the chunks cover the body from body to the end, in
// order, without gaps.
func checkCover(t testing.TB, chunks []chunk, src *source, body int) {
	t.Helper()
	if len(chunks) == 0 {
		t.Fatal("no chunks")
	}
	if chunks[0].start != body {
		t.Fatalf("first chunk starts at %d, body at %d", chunks[0].start, body)
	}
	end := chunks[0].start
	for i, c := range chunks {
		if c.start > end {
			t.Fatalf("gap before chunk %d: %d..%d", i, end, c.start)
		}
		if c.end < c.start || c.end > len(src.Data) {
			t.Fatalf("chunk %d has range %d..%d of %d", i, c.start, c.end, len(src.Data))
		}
		if i > 0 && c.start < chunks[i-1].start {
			t.Fatalf("chunk %d starts before chunk %d", i, i-1)
		}
		end = max(end, c.end)
	}
	if end != len(src.Data) {
		t.Fatalf("chunks end at %d, source at %d", end, len(src.Data))
	}
}

func FuzzChunkBody(f *testing.F) {
	for _, seed := range []string{
		"# A\n\ntext\n\n## B\n\nmore\n", "---\nt: 1\n---\n# H\n", "```\n# not a heading\n```\n# real\n",
		"Title\n=====\n\ntext", "> # quoted\n\n- # list\n", strings.Repeat("x\n\n", 2000), "#\n##\n###", "",
		"<div>\n# html\n</div>\n", "    # indented code\n",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) {
		chunks, src, body := chunksOf(t, text)
		checkCover(t, chunks, src, body)
	})
}

// stockParser is goldmark's own block parser, which blockParser must
// agree with.
var stockParser = parser.NewParser(
	parser.WithBlockParsers(parser.DefaultBlockParsers()...),
	parser.WithParagraphTransformers(util.Prioritized(parser.LinkReferenceParagraphTransformer, 100)),
)

// blockDocs are markdown documents whose blocks blockParser must find as
// goldmark's stock parser does.
var blockDocs = []string{
	"Title\n=====\n\nText *with* [links](x).\n\nSub\n---\n",
	"para one\nstill one\n\n- a\n- b\n\n  more b\n\n1. x\n2. y\n",
	"> quoted\nlazy line\n> Heading in quote\n> ---\n\nafter\n",
	"[ref]: https://example.com\n\nUses [ref].\n\n[only]: /x\n",
	"- item\n  Setext in item\n  ---\n- next\n",
	"    code\n\n```go\nfunc f() {}\n```\n\n<div>\nhtml\n</div>\n\ntext\n***\nmore\n",
	"# ATX *emph*\n\ntext\n\n## `code` heading ##\n\n\n",
	"line\n\n\n\n   indented para\n\t\ttabbed code\n",
	"```sh\nline one\n\n# not a heading\n```\n# after\n~~~~\nunclosed\n```\n",
	"  [a]: /x 'title'\n[b]:\n  /y\n\n   [c]: </z> \"t\"\ntext after\n\n\t[d]: /w\n",
	"> ```\n> code in quote\n> ```\n- ```\n  code in item\n\n  ```\n",
	"[not a def] text\n\n[x]: /u\n# H\n",
	"A title\n  over *three*\nlines\n===\n\ntext\n\nTwo\n lines  \n---\n",
	"[x]: /u\nTitle after a definition\nand a line\n---\n",
	"- a\n  b\n  c\n  ---\n\n> q\n> r\n> ===\n",
	"[x]\n: /u\n# H\n\n[a\nb]: /u\nText\n===\n",
	"> [!NOTE]\n> A note.\n\n> [x]: /u\n> text\n---\n",
	"[link](x) and [y]: /z\nTitle\n---\n\n- [x]: /u\n  [y]: /v\n",
}

// Paragraphs closed down to their start, fenced code blocks cut to their
// first line, headings' lines set aside from the inline parse and link
// references looked for only where one can start must not change the
// blocks goldmark finds, nor the headings' text: compare with its stock
// parser.
func TestStartOnlyParagraphsKeepBlocks(t *testing.T) {
	for _, md := range blockDocs {
		checkBlocksMatchStock(t, md)
	}
}

func FuzzBlocksMatchStock(f *testing.F) {
	for _, md := range blockDocs {
		f.Add(md)
	}
	f.Fuzz(checkBlocksMatchStock)
}

func checkBlocksMatchStock(t *testing.T, md string) {
	src := []byte(md)
	want := topLevelBlocksWith(stockParser, src, 0)
	got := topLevelBlocks(src, 0)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("%q:\n got %v\nwant %v", md, got, want)
	}
}

// A long paragraph is cut after a sentence, never inside a word, and the
// next piece reaches back, so that a phrase across the cut is whole in
// one piece.
func TestChunkCutsProseAtBoundaries(t *testing.T) {
	var b strings.Builder
	b.WriteString("# Prose\n\n")
	for i := 0; b.Len() < 7000; i++ {
		fmt.Fprintf(&b, "Sentence number %d speaks of a Christian pleasure and its many causes", i)
		b.WriteString(". ")
	}
	b.WriteString("\n")
	chunks, src, _ := chunksOf(t, b.String())
	if len(chunks) < 3 {
		t.Fatalf("%d chunks, want the paragraph split", len(chunks))
	}
	checkCover(t, chunks, src, 0)
	text := string(src.Data)
	near := func(at int) string { return text[max(at-10, 0):min(at+10, len(text))] }
	for i, c := range chunks {
		if c.end-c.start > maxChunk+lineOverlap {
			t.Errorf("chunk %d is %d bytes", i, c.end-c.start)
		}
		if i > 0 && c.start > 0 && text[c.start-1] != ' ' && text[c.start-1] != '\n' {
			t.Errorf("chunk %d starts inside a word: %q", i, near(c.start))
		}
		if c.end < len(text) && !strings.HasSuffix(text[c.start:c.end], ". ") {
			t.Errorf("chunk %d ends mid-sentence: %q", i, near(c.end))
		}
	}
	for i := 1; i < len(chunks); i++ {
		if chunks[i].start >= chunks[i-1].end {
			t.Errorf("chunks %d and %d do not overlap", i-1, i)
		}
		// The words around the cut are whole in the later piece.
		cut := chunks[i-1].end
		around := strings.TrimSpace(text[max(cut-20, 0):min(cut+20, len(text))])
		if !strings.Contains(text[chunks[i].start:chunks[i].end], around) {
			t.Errorf("the text around cut %d (%q) is in no piece", i, around)
		}
	}
}

// markersExpr is what stripMarkers replaces by $1$2, matched by regexp.
var markersExpr = regexp.MustCompile("(^|[^\\w])[*_`~]+|[*_`~]+([^\\w]|$)")

func checkStripMarkers(t *testing.T, s string) {
	if got, want := stripMarkers(s), markersExpr.ReplaceAllString(s, "$1$2"); got != want {
		t.Fatalf("stripMarkers(%q) = %q, want %q", s, got, want)
	}
}

// stripMarkers removes what the regular expression does, on strings dense
// with markers, word and other characters, multi-byte and broken UTF-8.
func TestStripMarkersMatchesRegexp(t *testing.T) {
	for _, s := range []string{
		"", "*", "_", "about_Objects", "**bold** and _em_", "a **b**", "`code` ~~gone~~",
		"__init__", "snake_case_name_", "_x_y_", "*_*_*", "é*é", "\xff**\xff", "a*_b", "a_*b", "x__*",
	} {
		checkStripMarkers(t, s)
	}
	r := rand.New(rand.NewPCG(3, 4))
	alphabet := []string{"*", "_", "`", "~", "a", "Z", "0", " ", "-", ".", "é", "日", "\xff", "\n", "**", "__"}
	for range 50000 {
		var b strings.Builder
		for range r.IntN(14) {
			b.WriteString(alphabet[r.IntN(len(alphabet))])
		}
		checkStripMarkers(t, b.String())
	}
}

func FuzzStripMarkers(f *testing.F) {
	f.Add("about_Objects **bold** _x_ `y` ~~z~~")
	f.Fuzz(checkStripMarkers)
}

// oneSpaced is strings.Join(strings.Fields(s), " "), with ASCII and
// Unicode spaces, at either end and in runs.
func TestOneSpacedMatchesFields(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	alphabet := []string{"a", "Z", " ", "  ", "\t", "\n", "\v", "\f", "\r", "\u0085", "\u00a0", "\u2003", "é", "\xff", "-"}
	for n := range 50000 {
		var b strings.Builder
		for range r.IntN(10) {
			b.WriteString(alphabet[r.IntN(len(alphabet))])
		}
		s := b.String()
		if got, want := oneSpaced(s), strings.Join(strings.Fields(s), " "); got != want {
			t.Fatalf("case %d: oneSpaced(%q) = %q, want %q", n, s, got, want)
		}
	}
}

// countHeadingsByLine is countHeadings as its doc comment says it.
func countHeadingsByLine(md []byte, limit int) int {
	n := 0
	for _, line := range strings.Split(string(md), "\n") {
		if n > limit {
			break
		}
		trimmed := strings.TrimLeft(line, " ")
		if len(line)-len(trimmed) <= 3 && strings.HasPrefix(trimmed, "#") {
			n++
		}
	}
	return n
}

func TestCountHeadings(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	alphabet := []string{"#", " ", "\n", "a", "    ", "\t", "\r\n", "##"}
	for c := range 50000 {
		var b strings.Builder
		for range r.IntN(16) {
			b.WriteString(alphabet[r.IntN(len(alphabet))])
		}
		md := []byte(b.String())
		for _, limit := range []int{0, 1, 3, 100} {
			if got, want := countHeadings(md, limit), countHeadingsByLine(md, limit); got != want {
				t.Fatalf("case %d: countHeadings(%q, %d) = %d, want %d", c, md, limit, got, want)
			}
		}
	}
}
