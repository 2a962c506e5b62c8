package compiler

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	mathbits "math/bits"
	"path"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/kbqdev/kbq/artifact"
	"github.com/kbqdev/kbq/compiler/checks"
	"github.com/kbqdev/kbq/knowledge"
)

// document is one knowledge file, parsed and validated.
type document struct {
	artifact.Document
	// generated marks a context file kbq context -o wrote (its first line
	// is knowledge.GeneratedMarker): the knowledge it holds is already indexed, and
	// reading it as context would feed each run on the last.
	generated bool
	meta      meta
	src       *source
	body      int // byte offset of the body in src.Data
	chunks    []chunk
	diags     Diagnostics
	// lines, for a document searched as a conversion (HTML), maps each line
	// of src, from 0, to the lines of the file it came from.
	lines [][2]int
	// tooManyWords is set when the document has over maxDocumentWords
	// distinct words: indexing it adds no more than that to a segment's
	// vocabulary.
	tooManyWords bool
}

// maxDocumentWords bounds the distinct words one document adds to the
// index's vocabulary, which a build holds in memory: a file of generated
// identifiers or a log dump would otherwise cost memory by its variety.
// (A long book has some 50,000.)
const maxDocumentWords = 100_000

// manyWords reports whether text has over maxDocumentWords distinct
// words, counted as written, case aside. Shorter texts cannot: it only
// looks at those of over 4 bytes a word.
func manyWords(text []byte) bool {
	if len(text) <= 4*maxDocumentWords {
		return false
	}
	seen := make(map[string]struct{}, 1<<14)
	var lower []byte
	over := false
	artifact.Words(text, func(start, end int) {
		if over {
			return
		}
		lower = append(lower[:0], text[start:end]...)
		for i, c := range lower {
			if 'A' <= c && c <= 'Z' {
				lower[i] = c + 'a' - 'A'
			}
		}
		if _, ok := seen[string(lower)]; !ok {
			seen[string(lower)] = struct{}{}
			over = len(seen) > maxDocumentWords
		}
	})
	return over
}

// fileLine is the line of the file that byte off of d.src comes from: the
// first of them, or with last the last.
func (d *document) fileLine(off int, last bool) int {
	line := d.src.LineOf(off)
	if d.lines != nil && line >= 1 && line <= len(d.lines) {
		if last {
			return d.lines[line-1][1]
		}
		return d.lines[line-1][0]
	}
	return line
}

// failed reports whether the document has errors and must not be indexed.
func (d *document) failed() bool { return d.diags.Errors() > 0 }

// input is a knowledge file to parse.
type input struct {
	path    string // the document's path in the artifact
	display string // the path diagnostics name
	blob    string
	loc     knowledge.Location
	data    []byte
	secrets secretAllowances  // what the configuration allows in this file
	foreign []string          // frontmatter keys of another tool (Config.ForeignKeys)
	paths   *checks.RepoPaths // the source's files, for references; nil to not check
}

// parseDocument validates in and splits it into chunks.
func parseDocument(in input) *document {
	d := &document{Document: artifact.Document{
		Path: in.path, Scope: in.loc.Scope, Kind: in.loc.Kind, Topic: in.loc.Topic, Blob: in.blob,
	}}
	report := func(line, col int, sev Severity, msg string) {
		d.diags = append(d.diags, Diagnostic{Path: in.display, Line: line, Col: col, Severity: sev, Message: msg})
	}
	if in.loc.Warning != "" {
		report(1, 1, Warning, in.loc.Warning)
	}
	if !utf8.ValidString(in.path) {
		// Shown as U+FFFD by JSON, MCP and HTTP, such a name could never
		// be asked for again (kbq get).
		bad := in.path[strings.IndexFunc(in.path, func(r rune) bool { return r == utf8.RuneError }):]
		report(1, 1, Error, fmt.Sprintf("the file name is not UTF-8 (byte 0x%02x): rename the file", bad[0]))
		return d
	}
	if !checkText(in.data, report) {
		return d
	}
	if in.loc.Kind == knowledge.KindContext && knowledge.IsGenerated(in.data) {
		d.generated = true
		return d
	}
	checkControls(in.path, in.data, report)
	d.src = newSource(in.data)
	checks.Secrets(d.src, in.secrets.allows, report)
	format := knowledge.TextFormat(in.path)
	var fm frontmatter
	switch format {
	case "md":
		allowTagsLine := d.Kind == knowledge.KindTopic
		fm = splitFrontmatter(d.src, allowTagsLine, func(line, col int, msg string) { report(line, col, Error, msg) })
	case "html":
		// Searched as the text a reader sees, its lines mapped back to
		// the file's; the <title> is the title.
		page := convertHTML(in.data)
		d.src, d.lines = newSource(page.text), page.lines
		d.meta.title = cutText(page.title, maxTitle)
		if len(page.title) > maxTitle {
			report(1, 1, Warning, fmt.Sprintf("<title> is %d bytes: the first %d are kept (it is stored with every chunk)", len(page.title), maxTitle))
		}
	}
	title := d.meta.title
	d.meta = readMeta(d.Kind, fm, report, in.foreign)
	d.meta.title = cmp.Or(d.meta.title, title)
	d.body = fm.body
	var h1 string
	if !d.failed() {
		// A document in error is never indexed: its markdown need not be
		// parsed (a build that keeps going reads it on every build).
		h1 = d.chunk(format, in.paths, report)
	}

	switch {
	case len(bytes.TrimSpace(in.data)) == 0:
		report(1, 1, Warning, "empty file")
	case format == "html" && len(bytes.TrimSpace(d.src.Data)) == 0:
		report(1, 1, Warning, "no text to search: the page holds none outside scripts, styles, navigation and forms")
	case !fm.unclosed && len(bytes.TrimSpace(d.src.Data[d.body:])) == 0:
		report(d.src.LineOf(max(d.body-1, 0)), 1, Warning, "empty body: the document has frontmatter but no text to search")
	}
	if d.Kind == knowledge.KindMemory {
		d.checkMemoryName(report)
	}
	d.Title = cmp.Or(d.meta.title, h1, d.fallbackTitle())
	d.fromMeta()
	return d
}

// chunk splits the document's body into chunks, checks its references
// and its vocabulary, and returns its first top-level heading.
func (d *document) chunk(format string, paths *checks.RepoPaths, report reporter) (h1 string) {
	var cut []int
	switch {
	case format == "txt":
		d.chunks, h1, _ = chunkBodyWith(plainParser, d.src, d.body) // plain text: no markup
	case countHeadings(d.src.Data[d.body:], maxHeadings) > maxHeadings:
		report(d.src.LineOf(d.body), 1, Warning, fmt.Sprintf("over %d headings: the document is chunked by size alone, its headings are not chunk boundaries; split it into smaller documents", maxHeadings))
		d.chunks, h1, _ = chunkBodyWith(plainParser, d.src, d.body)
	default:
		d.chunks, h1, cut = chunkBody(d.src, d.body)
	}
	if format == "md" && d.Kind == knowledge.KindContext {
		d.Headings = contextHeadings(d.src.Data, d.body)
	}
	if len(cut) > 0 {
		what := "a heading"
		if len(cut) > 1 {
			what = fmt.Sprintf("%d headings, the first here,", len(cut))
		}
		report(d.src.LineOf(cut[0]), 1, Warning, fmt.Sprintf("%s over %d bytes: the title and the chunks under it carry its first %d; shorten it", what, maxHeadingText, maxHeadingText))
	}
	if format == "md" {
		checks.References(d.Path, d.src, d.body, paths, report)
	}
	if manyWords(d.src.Data[d.body:]) {
		d.tooManyWords = true
		report(d.src.LineOf(d.body), 1, Warning, fmt.Sprintf("over %d distinct words: words first met past them are not indexed; split the document", maxDocumentWords))
	}
	return h1
}

// fromMeta sets the manifest's fields of the document from its
// frontmatter.
func (d *document) fromMeta() {
	d.Status = d.meta.status
	for _, r := range d.meta.supersedes {
		d.Supersedes = append(d.Supersedes, r.Text)
	}
	for _, r := range d.meta.contradicts {
		d.Contradicts = append(d.Contradicts, r.Text)
	}
	d.Tags = d.meta.tags
	d.Source = d.meta.source
	d.Meta = d.meta.extra
	d.ID = d.meta.id
	if d.meta.hasImportance {
		importance := d.meta.importance // not a pointer into d, which the manifest would keep alive
		d.Importance = &importance
	}
	if !d.meta.created.IsZero() {
		d.Created = d.meta.created.UTC().Format(time.RFC3339)
	}
	if !d.meta.expires.IsZero() {
		d.Expires = d.meta.expires.UTC().Format(time.RFC3339)
	}
}

// checkText reports a binary file or invalid UTF-8 and returns whether the
// file is text.
func checkText(data []byte, report reporter) bool {
	src := bytes.TrimPrefix(data, checks.BOM)
	if i := bytes.IndexByte(src, 0); i >= 0 {
		line, col := rawPosition(src, i)
		report(line, col, Error, "binary file (NUL byte here): knowledge files must be UTF-8 text")
		return false
	}
	if !utf8.Valid(src) {
		i := 0
		for i < len(src) {
			r, n := utf8.DecodeRune(src[i:])
			if r == utf8.RuneError && n <= 1 {
				break
			}
			i += n
		}
		line, col := rawPosition(src, i)
		report(line, col, Error, fmt.Sprintf("invalid UTF-8 (byte 0x%02x): save the file as UTF-8", src[i]))
		return false
	}
	return true
}

// checkControls warns about control characters in a file's text or name
// (ESC, BEL, backspace, C1 controls, a carriage return that ends no line):
// kbq shows them escaped, but they are almost never meant, and a terminal
// that printed them raw would obey them.
func checkControls(name string, data []byte, report reporter) {
	for i, r := range name {
		if r < 0x20 || r >= 0x7f && r <= 0x9f {
			report(1, 1, Warning, fmt.Sprintf("the file name holds a control character (%s): rename the file", controlName(name[i:])))
			break
		}
	}
	src := bytes.TrimPrefix(data, checks.BOM)
	i := controlAt(src)
	if i < 0 {
		return
	}
	more := 0
	for j := i + 1; j < len(src); {
		k := controlAt(src[j:])
		if k < 0 {
			break
		}
		more++
		j += k + 1
	}
	line, col := rawPosition(src, i)
	also := ""
	if more > 0 {
		also = fmt.Sprintf(" (and %d more)", more)
	}
	report(line, col, Warning, fmt.Sprintf("control character %s%s: kbq shows it escaped; remove it", controlName(string(src[i:])), also))
}

// controlAt returns the offset of the first control character in b that is
// not a tab, a newline or the carriage return of a CRLF, or -1.
//
// Eight bytes at a time are passed over when none is below 0x20 but a tab
// or a newline, 0x7f or 0xc2 (which starts U+0080 to U+00BF): a quick
// test passes most, and the bytes of the rest are flagged exactly, so
// that a line's newline does not send its word to the byte-at-a-time
// test. A byte at a time, the scan was 2% of a build's CPU; eight at a
// time with the newlines' words tested byte by byte, 6% of parsing a
// document.
func controlAt(b []byte) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	i := 0
	for ; i+8 <= len(b); i += 8 {
		w := binary.LittleEndian.Uint64(b[i:])
		// A cheap test first, which flags a tab or a newline too, and
		// may flag the bytes after one it rightly flags.
		del, c2 := w^0x7f*ones, w^0xc2*ones
		if ((w-0x20*ones)&^w|(del-ones)&^del|(c2-ones)&^c2)&highs == 0 {
			continue
		}
		below := ^((w&^highs + 0x60*ones) | w) & highs // bytes below 0x20
		m := below&^(zeroBytes(w^0x09*ones)|zeroBytes(w^0x0a*ones)) | zeroBytes(del) | zeroBytes(c2)
		if m == 0 {
			continue
		}
		for j := i + mathbits.TrailingZeros64(m)/8; j < i+8; j++ {
			if isControlAt(b, j) {
				return j
			}
		}
	}
	for ; i < len(b); i++ {
		if isControlAt(b, i) {
			return i
		}
	}
	return -1
}

// zeroBytes flags, in its high bit, each byte of y that is zero.
func zeroBytes(y uint64) uint64 {
	const highs = 0x8080808080808080
	return ^((y&^highs + ^uint64(highs)) | y) & highs
}

// isControlAt reports whether b[i] starts a control character other than
// a tab, a newline or the carriage return of a CRLF.
func isControlAt(b []byte, i int) bool {
	switch c := b[i]; {
	case c == '\t' || c == '\n':
	case c == '\r':
		return i+1 >= len(b) || b[i+1] != '\n'
	case c < 0x20 || c == 0x7f:
		return true
	case c == 0xc2 && i+1 < len(b) && b[i+1] >= 0x80 && b[i+1] <= 0x9f: // U+0080–U+009F
		return true
	}
	return false
}

// controlName names the control character s starts with: U+001B (ESC).
func controlName(s string) string {
	r, _ := utf8.DecodeRuneInString(s)
	names := map[rune]string{0x07: "BEL", 0x08: "backspace", 0x09: "tab", 0x0a: "newline", 0x0b: "vertical tab", 0x0c: "form feed", 0x0d: "carriage return", 0x1b: "ESC", 0x7f: "DEL", 0x9b: "CSI"}
	if n, ok := names[r]; ok {
		return fmt.Sprintf("%U (%s)", r, n)
	}
	return fmt.Sprintf("%U", r)
}

// rawPosition is the line and column of byte i, counting columns in bytes
// up to the first invalid byte.
func rawPosition(src []byte, i int) (line, col int) {
	line = 1 + bytes.Count(src[:i], []byte("\n"))
	start := bytes.LastIndexByte(src[:i], '\n') + 1
	return line, 1 + utf8.RuneCount(src[start:i])
}

func (d *document) checkMemoryName(report reporter) {
	name := path.Base(d.Path)
	n, ok := knowledge.MemoryNameID(name)
	if !ok {
		report(1, 1, Error, fmt.Sprintf("memory file name %q is not NNN-slug.md (kbc remember names them so)", name))
		return
	}
	if d.meta.id > 0 && n != d.meta.id {
		number, _, _ := strings.Cut(name, "-")
		report(d.meta.idLine, d.meta.idCol, Warning, fmt.Sprintf("id %d does not match the file name's number %s", d.meta.id, number))
	}
}

// fallbackTitle is the title of a document that sets none and has no level-1
// heading: a memory's first line, or the topic's last path element.
func (d *document) fallbackTitle() string {
	if d.Kind == knowledge.KindMemory && d.src != nil {
		body := strings.TrimSpace(string(d.src.Data[d.body:]))
		first, _, _ := strings.Cut(body, "\n")
		first = strings.TrimLeft(first, "#>-* ")
		if first != "" {
			return truncate(first, 80)
		}
	}
	name := path.Base(d.Topic)
	if d.Kind == knowledge.KindMemory {
		if _, ok := knowledge.MemoryNameID(name + ".md"); ok {
			_, name, _ = strings.Cut(name, "-")
		}
	}
	return strings.NewReplacer("-", " ", "_", " ").Replace(name)
}
