package compiler

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/yuin/goldmark/parser"

	"github.com/kbqdev/kbq/internal/corpora"
	"github.com/kbqdev/kbq/internal/testreq"
)

// checkScanBlocks holds scanBlocks to goldmark on md, with headings and
// without; it reports whether the port took md (it gives up on what it
// leaves to goldmark).
func checkScanBlocks(t *testing.T, name string, md []byte) bool {
	t.Helper()
	took := false
	for _, p := range []parser.Parser{blockParser, plainParser} {
		if _, ok := scanBlocks(md, 0, p == blockParser); !ok {
			continue
		}
		took = true
		got, want := blocksWith(p, md, 0), topLevelBlocksWith(p, md, 0)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s (headings %v): %q\n got %v\nwant %v", name, p == blockParser, cutText(string(md), 2000), got, want)
		}
		// After frontmatter, the blocks' starts count from the file's.
		src := append([]byte("---\ntitle: x\n---\n"), md...)
		body := len(src) - len(md)
		got, want = blocksWith(p, src, body), topLevelBlocksWith(p, src, body)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s (headings %v, body at %d): %q\n got %v\nwant %v", name, p == blockParser, body, cutText(string(md), 2000), got, want)
		}
	}
	return took
}

// mdCases are documents of the constructs whose rules the port follows:
// containers and what ends them, laziness, fences inside containers,
// setext underlines, HTML blocks of every kind, headings' odd forms.
var mdCases = []string{
	"",
	"\n\n",
	"# H",
	"#",
	"##\n",
	"# H #\n",
	"### ###\n",
	"#5 not\n",
	"####### seven\n",
	"  # indented\n    # code\n",
	"# Title ##  \ntext\n",
	"# Title \\#\n",
	"Title\n===\n",
	"Title\n  ---  \n",
	"a\nb\n---\nc\n",
	"- a\n---\n",
	"- a\n- ---\n",
	"* a\n* * *\n",
	"- a\n  ---\n",
	"- a\n\n  ---\n",
	"---\n- a\n",
	"- a\n - b\n  - c\n   - d\n    - e\n",
	"1. a\n2. b\n3) c\n",
	"1. a\n\n   b\n\n4. c\n",
	"para\n2. not a list\n",
	"para\n1. a list\n",
	"para\n-\nmore\n",
	"-\n\n  foo\n",
	"-\n  foo\n",
	"- \n- b\n",
	"-\n\n\n- b\n",
	"- a\n\n\n- b\n",
	"-    code in item\n",
	"- a\n      code\n",
	"- a\n\n      code\n  b\n",
	"10. ten\n    text\n",
	"1234567890. too long\n",
	"- a\n+ b\n* c\n",
	"- a\n lazy\nlazier\n",
	"> q\nlazy\n> - item\nlazy item\n",
	"> ```\n> code\nout\n",
	">\n>\n> a\n",
	">a\n>  b\n   > c\n    > d\n",
	"> # H\n> b\n",
	"- > q\n  > r\n- s\n",
	"> - a\n>   - b\n> c\n",
	"```\n```\n",
	"```\n",
	"``` go\ncode\n```\n",
	"```go `x`\n```\n",
	"~~~ ``` ~~~\n~~~\n",
	"  ```\n  code\n ```\nafter\n",
	"   ```\n\n  x\n```\n",
	"````\n```\n````\n",
	"- ```\n  a\n\n  b\n  ```\n- c\n",
	"- ```\n  a\nb\n```\n",
	"    code\n\n    more\n  not\n",
	"para\n    not code\n",
	"<!-- c -->\ntext\n",
	"<!-- open\n\nstill\n-->\nafter\n",
	"<div>\n*x*\n\ny\n",
	"<div\nfoo\n",
	"</div>\n",
	"<script>\nx\n</script>\ny\n",
	"<script>x</script>\ny\n",
	"<pre>\n\n</pre>\n",
	"<?php\n\n?>\n",
	"<!DOCTYPE html>\nx\n",
	"<![CDATA[\nx\n]]>\n",
	"<a href=\"x\">\ntext\n",
	"para\n<a href=\"x\">\nmore\n",
	"<x-custom y='1' />\n\n",
	"</a title=\"x\">\n",
	"<b>bold</b> text\n",
	"- <div>\n  x\n- y\n",
	"[x]\n\n[x]: not a def because it is here\n",
	"* * *\n_ _ _\n- - -\n",
	"a\n===\n===\n",
	"> a\n===\n",
	"- a\n===\n",
	"  a\n  b\n  ===\n",
	"a  \nb\\\nc\n===\n",
	"\u00a0# nbsp\n\u00a0\u00a0title\n===\n",
	"é\n---\n",
	strings.Repeat("- a\n  - b\n", 50),
	strings.Repeat("> ", 40) + "deep\n",
}

// The port finds the blocks goldmark finds, headings' text and all, on
// the documents above and those chunk_test.go holds goldmark to.
func TestScanBlocksMatchGoldmark(t *testing.T) {
	for _, md := range append(append([]string{}, mdCases...), blockDocs...) {
		checkScanBlocks(t, "case", []byte(md))
	}
}

// And on every document of the shared corpora (skipped when ../shared
// is absent) and this repository's own knowledge and docs, most of which
// the port takes. The port is one goroutine's: -short (the race
// detector's run) leaves this to the full run.
func TestScanBlocksMatchGoldmarkOnCorpora(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the full run compares every document")
	}
	for _, corpus := range []string{"hugo-docs.tar.gz", "powershell-docs.tar.gz"} {
		n, took := 0, 0
		err := corpora.Markdown(filepath.Join("..", "..", "shared", "corpora", corpus), func(name string, data []byte) {
			n++
			if checkScanBlocks(t, corpus+"/"+name, data) {
				took++
			}
		})
		if os.IsNotExist(err) {
			testreq.Skip(t, testreq.Corpora, "../shared/corpora is not there")
		}
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: the port took %d of %d documents", corpus, took, n)
		if took < n*9/10 {
			t.Errorf("%s: the port took %d of %d documents, want nine in ten", corpus, took, n)
		}
	}
	for _, dir := range []string{"../.kb", "../docs"} {
		err := corpora.MarkdownIn(dir, func(p string, data []byte) { checkScanBlocks(t, p, data) })
		if err != nil {
			t.Fatal(err)
		}
	}
}

// Documents made of random lines dense with the characters that open,
// continue and end blocks, at random indents.
func TestScanBlocksMatchGoldmarkGenerated(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	n := 30000
	if testing.Short() {
		n = 1000 // the race detector's run
	}
	pieces := []string{
		"", " ", "  ", "   ", "    ", "      ", "- ", "* ", "+ ", "1. ", "2) ", "-", "> ", ">", "# ", "## ", "#",
		"```", "~~~", "````", "---", "===", "***", "___", "<div>", "</div>", "<!--", "-->", "<script>",
		"</script>", "<?", "?>", "<!X", "<![CDATA[", "]]>", "<a href='x'>", "<b>", "[x]", "text", "more words",
		"a", "é", "`", "*", "_", "[a]:", "[b]", "]:", ": /u", " <x>", " 'title'", "\"t\"", "(t)", "(", ")",
		"\\]", "[", "]",
	}
	for range n {
		var b strings.Builder
		for range 1 + r.IntN(12) {
			for range r.IntN(4) {
				b.WriteString(pieces[r.IntN(len(pieces))])
			}
			if r.IntN(8) > 0 {
				b.WriteByte('\n')
			}
		}
		checkScanBlocks(t, "generated", []byte(b.String()))
		if t.Failed() {
			return
		}
	}
}

func FuzzScanBlocksMatchGoldmark(f *testing.F) {
	for _, md := range append(append(append([]string{}, mdCases...), blockDocs...), linkDefCases...) {
		f.Add(md)
	}
	f.Fuzz(func(t *testing.T, md string) {
		checkScanBlocks(t, "fuzz", []byte(md))
	})
}

// Link reference definitions: goldmark makes each a block before its
// paragraph and takes its lines out of it, across lines, with titles,
// escapes, and underlines after them.
var linkDefCases = []string{
	"[a]: /u\n",
	"[a]: /u\n[b]: /v 'title'\n[c]:\n  /w\n  \"t\"\ntext after\n",
	"[a]: /u\ntext\n===\n",
	"[a]: /u\n===\n",
	"[a]: /u\n---\n",
	"text\n[a]: /u\n",
	"[a]: /u junk\n",
	"[a]: /u 'unclosed\nmore\n",
	"[a]: /u\n'title' junk\n[b]: /v\n",
	"[a\nb]: /u\n",
	"[]: /u\n",
	"[ ]: /u\n",
	"[\\]]: /u\n",
	"[a]: <b c> \"t\"\n",
	"[a]: <b\n",
	"[a]: (b) (t)\n",
	"[a]:\n\n/u\n",
	"[a]: /u\"t\"\n",
	"  [a]: /u\n   [b]: /v\n",
	"- [a]: /u\n  text\n- b\n",
	"- [a]: /u\n\n  text\n",
	"> [a]: /u\n> text\n> ---\n",
	"[a]: /u\n> q\n",
	"[a]: /u\n- x\n",
	"[link](x) and [y]: /z\nTitle\n---\n",
	"[a]: /u\n[b]\n: /v\n",
	"[a]: /u 'x'\n[b]: /v\nT\n==\n",
	"[x]: <>\n",
	"[x]: /u (a\nb)\n# H\n",
}

// The port takes every one of them, and finds goldmark's blocks; and in
// a paragraph of thousands, whose lines goldmark takes out one
// definition at a time and the port in one pass.
func TestScanBlocksMatchGoldmarkOnLinkDefinitions(t *testing.T) {
	many := strings.Repeat("[a]: /u 'title\nmore'\n[b]: /v\n[c]:\n  /w\n", 700) + "text\nTail\n---\n"
	for _, md := range append(linkDefCases, many) {
		if !checkScanBlocks(t, "definitions", []byte(md)) {
			t.Errorf("the port gave up on %q", md)
		}
	}
}

// BenchmarkScanBlocks finds the blocks of every PowerShell document, by
// goldmark's parse and by the port (skipped when ../shared is absent).
func BenchmarkScanBlocks(b *testing.B) {
	var docs [][]byte
	err := corpora.Markdown(filepath.Join("..", "..", "shared", "corpora", "powershell-docs.tar.gz"), func(name string, data []byte) {
		docs = append(docs, data)
	})
	if err != nil {
		testreq.Skip(b, testreq.Corpora, err.Error())
	}
	for _, c := range []struct {
		name   string
		blocks func(parser.Parser, []byte, int) []block
	}{{"goldmark", topLevelBlocksWith}, {"port", blocksWith}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				for _, d := range docs {
					c.blocks(blockParser, d, 0)
				}
			}
		})
	}
}

// lineEndBytewise is lineEnd a byte at a time.
func lineEndBytewise(b []byte) (int, bool) {
	for i, c := range b {
		if c == '\n' {
			return i, false
		}
		if c < 14 {
			return i, true
		}
	}
	return -1, false
}

// lineEnd, eight bytes at a time, finds the line feed or the byte the
// port leaves to goldmark that a byte at a time finds, and the port gives
// up a document with one anywhere.
func TestLineEnd(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	alphabet := []byte("ab \n\t\r\v\f\x00\x01\x0d\x0e\x1f\x7f\x80\x8a\x8d\xc3\xff")
	for n := range 50000 {
		b := denseBytes(r, alphabet, 6)
		gotAt, gotBad := lineEnd(b)
		wantAt, wantBad := lineEndBytewise(b)
		if gotAt != wantAt || gotBad != wantBad {
			t.Fatalf("case %d %q: %d %v, want %d %v", n, b, gotAt, gotBad, wantAt, wantBad)
		}
	}
	for _, md := range []string{"a\tb\n", "# H\n\npara\n\n\tcode\n", "line\r\n", "x\n\n" + strings.Repeat("y", 100) + "\x00"} {
		if _, ok := scanBlocks([]byte(md), 0, true); ok {
			t.Errorf("the port took %q", md)
		}
	}
}

// A document of more blocks than maxPooledNodes leaves no parser that
// large in the pool: a build's workers keep their parsers between
// documents, not a hostile file's nodes.
func TestScanBlocksPoolsNoHugeParser(t *testing.T) {
	md := []byte(strings.Repeat("para\n\n", maxPooledNodes+10))
	blocks, ok := scanBlocks(md, 0, true)
	if !ok || len(blocks) != maxPooledNodes+10 {
		t.Fatalf("%d blocks, ok %v", len(blocks), ok)
	}
	p := mdParsers.Get().(*mdParser)
	defer mdParsers.Put(p)
	if cap(p.nodes) > maxPooledNodes {
		t.Errorf("a pooled parser keeps room for %d nodes", cap(p.nodes))
	}
}
