package compiler

import (
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// Chunk sizes in bytes. A section longer than maxChunk is split at block
// boundaries (paragraphs, lists, code blocks); a block longer than maxChunk
// is split at line boundaries. Sections shorter than minChunk are merged
// with the sections that follow them: a two-line section is a poor search
// result on its own, and every chunk costs index time.
const (
	minChunk = 1000
	maxChunk = 3000
	// maxOverlap is the largest block repeated at the start of the next piece
	// of a split section, so that a sentence spanning the cut is found.
	maxOverlap = 400
)

// chunk is a piece of a document's body.
type chunk struct {
	heading    string // heading trail, "Deploy > Rollback"
	start, end int    // byte range in the source
}

// blockParser parses markdown block structure only: headings, paragraphs,
// lists, code. Inline markup is not needed to find chunk boundaries and
// parsing it would cost a third more.
var blockParser = parser.NewParser(
	parser.WithBlockParsers(blockParsers(true)...),
	parser.WithParagraphTransformers(util.Prioritized(linkReferences{}, 100)),
)

// linkReferences is goldmark's link reference definition transformer for
// the paragraphs that can hold one: a '[' after at most three spaces, and
// a label closed by "]:" on one of its lines (a label may span lines, but
// its bracket and the colon after it are one). goldmark's reads every
// paragraph, with a reader allocated for each (16 MB of the 520 MB a
// build of the PowerShell docs allocates); most of those starting with
// '[' are links, "[text](url)", or notes, "[!NOTE]".
type linkReferences struct{}

func (linkReferences) Transform(node *ast.Paragraph, reader text.Reader, pc parser.Context) {
	lines := node.Lines()
	if lines.Len() == 0 {
		parser.LinkReferenceParagraphTransformer.Transform(node, reader, pc)
		return
	}
	src := reader.Source()
	seg := lines.At(0)
	if first := bytes.TrimLeft(seg.Value(src), " \t"); len(first) > 0 && first[0] != '[' {
		return
	}
	for i := range lines.Len() {
		seg := lines.At(i)
		if bytes.Contains(seg.Value(src), []byte("]:")) {
			parser.LinkReferenceParagraphTransformer.Transform(node, reader, pc)
			return
		}
	}
}

// plainParser is blockParser without headings, for a document with more
// than maxHeadings: its text is chunked by size alone.
var plainParser = parser.NewParser(
	parser.WithBlockParsers(blockParsers(false)...),
)

// maxHeadings bounds the headings of a document that become chunk
// boundaries: a document with more (a generated or hostile file; the most
// in the PowerShell and Hugo docs is 214) is chunked by size, with a
// warning, so that its cost follows its size and not its markup.
const maxHeadings = 2000

// countHeadings counts the lines of md that may be ATX headings, up to
// limit+1: a line starting with up to three spaces and a #. It looks only
// at the #s of md and the bytes before them on their line: most lines
// have none.
func countHeadings(md []byte, limit int) int {
	n := 0
	for i := 0; n <= limit; {
		j := bytes.IndexByte(md[i:], '#')
		if j < 0 {
			break
		}
		at := i + j
		k := at - 1
		for k >= 0 && at-k <= 4 && md[k] == ' ' {
			k--
		}
		if (k < 0 || md[k] == '\n') && at-k <= 4 {
			n++
		}
		// The rest of the line cannot start another.
		if e := bytes.IndexByte(md[at:], '\n'); e >= 0 {
			i = at + e + 1
		} else {
			break
		}
	}
	return n
}

// blockParsers are goldmark's defaults, with paragraphs that keep only
// where they start; without headings when headings is false.
func blockParsers(headings bool) []util.PrioritizedValue {
	ps := []util.PrioritizedValue{
		util.Prioritized(parser.NewThematicBreakParser(), 200),
		util.Prioritized(parser.NewListParser(), 300),
		util.Prioritized(parser.NewListItemParser(), 400),
		util.Prioritized(parser.NewCodeBlockParser(), 500),
		util.Prioritized(firstLineCode{parser.NewFencedCodeBlockParser()}, 700),
		util.Prioritized(parser.NewBlockquoteParser(), 800),
		util.Prioritized(parser.NewHTMLBlockParser(), 900),
		util.Prioritized(startOnlyParagraphs{parser.NewParagraphParser()}, 1000),
	}
	if headings {
		ps = append(ps, util.Prioritized(setextHeadings{parser.NewSetextHeadingParser()}, 100),
			util.Prioritized(rawHeadings{parser.NewATXHeadingParser()}, 600))
	}
	return ps
}

// startOnlyParagraphs closes a paragraph down to an empty segment where it
// starts. Goldmark scans the lines of every paragraph for inline markup
// even with no inline parser, a third of its parsing time, and chunking
// needs only where blocks start. A paragraph that turns into a setext
// heading keeps its lines: the heading takes them when it closes.
type startOnlyParagraphs struct{ parser.BlockParser }

// firstLineCode keeps the first line of a fenced code block and none
// after: chunking needs only where the block starts, and goldmark appends
// every line to a growing list (25 MB of a build of the PowerShell docs).
type firstLineCode struct{ parser.BlockParser }

func (p firstLineCode) Continue(node ast.Node, reader text.Reader, pc parser.Context) parser.State {
	state := p.BlockParser.Continue(node, reader, pc)
	if lines := node.Lines(); lines.Len() > 1 {
		lines.SetSliced(0, 1)
	}
	return state
}

// setextParagraph marks, in a parse's context, the paragraph that a setext
// heading underline turned into a heading.
var setextParagraph = parser.NewContextKey()

func (p startOnlyParagraphs) Close(node ast.Node, reader text.Reader, pc parser.Context) {
	p.BlockParser.Close(node, reader, pc)
	lines := node.Lines()
	if node.Parent() == nil || lines.Len() == 0 || pc.Get(setextParagraph) == node {
		return
	}
	start := lines.At(0).Start
	lines.Clear()
	lines.Append(text.NewSegment(start, start))
}

// setextHeadings marks the paragraph a setext heading takes its text from,
// and sets its lines aside as rawHeadings does.
type setextHeadings struct{ parser.BlockParser }

func (p setextHeadings) Close(node ast.Node, reader text.Reader, pc parser.Context) {
	p.BlockParser.Close(node, reader, pc)
	setAside(node, pc)
}

// rawHeadings sets a heading's lines aside when it closes, and parse
// gives them back once goldmark is done: its inline parse of them, a
// tenth of its time, made nodes nothing reads (headingText reads the
// lines).
type rawHeadings struct{ parser.BlockParser }

func (p rawHeadings) Close(node ast.Node, reader text.Reader, pc parser.Context) {
	p.BlockParser.Close(node, reader, pc)
	setAside(node, pc)
}

// asideKey holds, in a parse's context, the headings whose lines are set
// aside.
var asideKey = parser.NewContextKey()

type asideLines struct {
	node  ast.Node
	lines text.Segments
}

func setAside(node ast.Node, pc parser.Context) {
	aside, _ := pc.Get(asideKey).(*[]asideLines)
	if aside == nil {
		aside = new([]asideLines)
		pc.Set(asideKey, aside)
	}
	*aside = append(*aside, asideLines{node, *node.Lines()})
	node.SetLines(text.NewSegments())
}

// parse parses md's blocks with p, the lines of its headings whole.
func parse(p parser.Parser, md []byte) ast.Node {
	pc := parser.NewContext()
	doc := p.Parse(text.NewReader(md), parser.WithContext(pc))
	if aside, _ := pc.Get(asideKey).(*[]asideLines); aside != nil {
		for i := range *aside {
			a := &(*aside)[i]
			a.node.SetLines(&a.lines)
		}
	}
	return doc
}

func (p setextHeadings) Open(parent ast.Node, reader text.Reader, pc parser.Context) (ast.Node, parser.State) {
	last := pc.LastOpenedBlock().Node
	node, state := p.BlockParser.Open(parent, reader, pc)
	if node != nil {
		pc.Set(setextParagraph, last)
	}
	return node, state
}

// block is a top-level markdown block.
type block struct {
	start   int // byte offset of the block's first line in the source
	level   int // heading level, 0 for other blocks
	heading string
	cut     bool // the heading's text was longer than maxHeadingText
}

// maxHeadingText bounds the text a heading gives the title and the
// heading trail of every chunk under it, and maxTitle a title: either is
// stored with every chunk of its document, so a line of megabytes would
// otherwise be copied into each.
const (
	maxHeadingText = 512
	maxTitle       = 512
)

// cutText returns s, or its first n bytes and an ellipsis when it is
// longer, cut where a rune starts.
func cutText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// chunkBody splits src.Data[body:] into chunks at headings, and long sections
// further at block boundaries. The chunks cover the body without gaps; split
// sections overlap slightly. It also returns the text of the first level-1
// heading, if any, and where the headings whose text was cut to
// maxHeadingText start.
func chunkBody(src *source, body int) (chunks []chunk, h1 string, cut []int) {
	return chunkBodyWith(blockParser, src, body)
}

// chunkBodyWith is chunkBody with the block parser p.
func chunkBodyWith(p parser.Parser, src *source, body int) (chunks []chunk, h1 string, cut []int) {
	text := src.Data
	if body >= len(text) {
		return []chunk{{start: body, end: body}}, "", nil
	}
	blocks := blocksWith(p, text, body)
	type section struct {
		trail      []string
		start, end int
		blocks     []int // block starts inside the section
	}
	var sections []section
	var trail []block
	cur := section{start: body}
	for _, b := range blocks {
		if b.level == 0 {
			cur.blocks = append(cur.blocks, b.start)
			continue
		}
		if b.cut {
			cut = append(cut, b.start)
		}
		if h1 == "" && b.level == 1 {
			h1 = b.heading
		}
		start := b.start
		if len(bytes.TrimSpace(text[cur.start:b.start])) > 0 {
			cur.end = b.start
			sections = append(sections, cur)
		} else {
			start = cur.start // blank lines before a heading join its section
		}
		for len(trail) > 0 && trail[len(trail)-1].level >= b.level {
			trail = trail[:len(trail)-1]
		}
		trail = append(trail, b)
		cur = section{trail: headings(trail), start: start}
	}
	cur.end = len(text)
	sections = append(sections, cur)

	// Merge small sections into the ones after them. A merged chunk's
	// trail is the trail its parts with text share, then, unless one of
	// them is text under that shared heading itself, the next heading of
	// each: "Config > Reloading · Shutting down", so that no part's text
	// is labelled with another's heading alone. A part with no heading,
	// or only its heading, names nothing.
	var merged []section
	var parts [][][]string // the trails of each merged section's parts with text
	named := func(s section) [][]string {
		if len(s.trail) == 0 {
			return nil
		}
		rest := text[s.start:s.end]
		if i := bytes.IndexByte(rest, '\n'); i >= 0 && len(bytes.TrimSpace(rest[i:])) > 0 {
			return [][]string{s.trail}
		}
		return nil
	}
	for _, s := range sections {
		if n := len(merged); n > 0 {
			last := &merged[n-1]
			if last.end-last.start < minChunk && s.end-last.start <= maxChunk {
				last.end = s.end
				last.blocks = append(append(last.blocks, s.start), s.blocks...)
				parts[n-1] = append(parts[n-1], named(s)...)
				continue
			}
		}
		merged = append(merged, s)
		parts = append(parts, named(s))
	}
	for i, s := range merged {
		trail := strings.Join(s.trail, " > ")
		if len(parts[i]) > 0 {
			trail = mergedTrail(parts[i])
		}
		chunks = appendSplit(chunks, text, trail, s.start, s.end, s.blocks)
	}
	return chunks, h1, cut
}

// mergedTrail is the heading trail of a chunk made of sections with the
// trails parts: their common trail, then each part's next heading.
func mergedTrail(parts [][]string) string {
	common := parts[0]
	for _, p := range parts[1:] {
		common = commonPrefix(common, p)
	}
	var next []string
	for _, p := range parts {
		if len(p) == len(common) {
			return strings.Join(common, " > ") // text under the shared heading itself: it covers the rest
		}
		if !slices.Contains(next, p[len(common)]) {
			next = append(next, p[len(common)])
		}
	}
	trail := strings.Join(common, " > ")
	if len(next) == 0 {
		return trail
	}
	if len(next) > 4 {
		next = append(next[:4], "…")
	}
	if trail != "" {
		trail += " > "
	}
	return cutText(trail+strings.Join(next, " · "), maxHeadingText)
}

func headings(trail []block) []string {
	out := make([]string, len(trail))
	for i, b := range trail {
		out[i] = b.heading
	}
	return out
}

func commonPrefix(a, b []string) []string {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return a[:n:n]
}

// A bound is where a long section may be cut: the piece before ends at at,
// and the next starts at resume, earlier when the cut falls inside a line
// of prose (so that a phrase across it is whole in one of the pieces).
type bound struct{ at, resume int }

// appendSplit appends the section [start,end) as one chunk, or as several cut
// at the block starts in cuts when it is longer than maxChunk.
func appendSplit(chunks []chunk, text []byte, heading string, start, end int, cuts []int) []chunk {
	if end-start <= maxChunk {
		return append(chunks, chunk{heading: heading, start: start, end: end})
	}
	// Boundaries: every block start, plus line starts inside oversized blocks.
	var bounds []bound
	prev := start
	for _, c := range append(cuts, end) {
		if c <= prev {
			continue
		}
		bounds = appendLineCuts(bounds, text, prev, c)
		prev = c
	}
	pieceStart := start
	lastBlock := start // start of the last boundary inside the current piece
	for i, b := range bounds {
		next := end
		if i+1 < len(bounds) {
			next = bounds[i+1].at
		}
		if next-pieceStart > maxChunk && b.at > pieceStart {
			chunks = append(chunks, chunk{heading: heading, start: pieceStart, end: b.at})
			pieceStart = b.at
			switch {
			case b.resume < b.at:
				pieceStart = b.resume
			case b.at-lastBlock <= maxOverlap && lastBlock > chunks[len(chunks)-1].start:
				pieceStart = lastBlock
			}
		}
		lastBlock = b.at
	}
	return append(chunks, chunk{heading: heading, start: pieceStart, end: end})
}

// appendLineCuts appends to bounds the block boundary from and, when the
// block [from,to) is longer than maxChunk, cuts inside it that keep pieces
// under maxChunk: at a line start, else (a long line of prose) at the end
// of a sentence, else between words, else between characters. A cut inside
// a line resumes up to lineOverlap bytes earlier, at a word.
func appendLineCuts(bounds []bound, text []byte, from, to int) []bound {
	bounds = append(bounds, bound{from, from})
	last := from
	for to-last > maxChunk {
		limit := last + maxChunk
		if cut := bytes.LastIndexByte(text[last+1:limit], '\n'); cut >= 0 {
			cut += last + 2
			bounds = append(bounds, bound{cut, cut})
			last = cut
			continue
		}
		cut := proseCut(text, last+maxChunk/2, limit)
		resume := cut
		if w := bytes.IndexByte(text[max(cut-lineOverlap, last+1):cut], ' '); w >= 0 {
			resume = max(cut-lineOverlap, last+1) + w + 1
		}
		bounds = append(bounds, bound{cut, resume})
		last = cut
	}
	return bounds
}

// lineOverlap is how far a piece cut inside a line of prose reaches back
// into the previous one.
const lineOverlap = 200

// proseCut returns where to cut text in (lo, hi]: after the last sentence
// end (". ", "? ", "! "), else after the last space, else at the last
// character boundary.
func proseCut(text []byte, lo, hi int) int {
	window := text[lo:hi]
	best := -1
	for _, end := range []string{". ", "? ", "! "} {
		if i := bytes.LastIndex(window, []byte(end)); i >= 0 {
			best = max(best, i+len(end))
		}
	}
	if best < 0 {
		if i := bytes.LastIndexByte(window, ' '); i >= 0 {
			best = i + 1
		}
	}
	if best > 0 {
		return lo + best
	}
	cut := hi
	for cut > lo && !utf8.RuneStart(text[cut]) {
		cut--
	}
	return cut
}

// topLevelBlocks returns the top-level blocks of the markdown in text[body:]
// that can start a chunk, in order.
func topLevelBlocks(src []byte, body int) []block {
	return blocksWith(blockParser, src, body)
}

// blocksWith is topLevelBlocksWith, from scanBlocks (goldmark's block
// parse ported) where p is one of chunk.go's parsers and the port takes
// the document.
func blocksWith(p parser.Parser, src []byte, body int) []block {
	if p != blockParser && p != plainParser {
		return topLevelBlocksWith(p, src, body)
	}
	if blocks, ok := scanBlocks(src, body, p == blockParser); ok {
		return blocks
	}
	return topLevelBlocksWith(p, src, body)
}

// topLevelBlocksWith is topLevelBlocks by goldmark's parse with p.
func topLevelBlocksWith(p parser.Parser, src []byte, body int) []block {
	md := src[body:]
	doc := parse(p, md)
	blocks := make([]block, 0, doc.ChildCount())
	for n := doc.FirstChild(); n != nil; n = n.NextSibling() {
		off, ok := blockOffset(n)
		if !ok {
			continue
		}
		start := body + lineStart(md, off)
		if h, isHeading := n.(*ast.Heading); isHeading {
			heading := headingText(segmentsOf(h.Lines()), md)
			cut := len(heading) > maxHeadingText
			heading = cutText(heading, maxHeadingText)
			blocks = append(blocks, block{start: start, level: h.Level, heading: heading, cut: cut})
			continue
		}
		blocks = append(blocks, block{start: start})
	}
	return blocks
}

// segmentsOf returns the bounds of goldmark's line segments: a segment's
// padding, the columns of a tab it starts inside, is spaces headingText
// trims.
func segmentsOf(lines *text.Segments) [][2]int {
	out := make([][2]int, lines.Len())
	for i := range out {
		seg := lines.At(i)
		out[i] = [2]int{seg.Start, seg.Stop}
	}
	return out
}

// contextHeadings records the top-level headings of a context document's
// body as the parser reads them (artifact.Document.Headings), for kbq
// context to shift them and nothing else: never a line of a code block
// however its fences nest.
func contextHeadings(src []byte, body int) []uint32 {
	if body >= len(src) {
		return []uint32{0}
	}
	md := src[body:]
	doc := parse(blockParser, md)
	var out []uint32
	for n := doc.FirstChild(); n != nil; n = n.NextSibling() {
		h, ok := n.(*ast.Heading)
		if !ok || h.Lines().Len() == 0 {
			continue
		}
		start := lineStart(md, h.Lines().At(0).Start)
		line := bytes.Count(md[:start], []byte{'\n'})
		first := bytes.TrimLeft(md[start:], " ")
		setext, lines := uint32(0), uint32(1)
		if len(first) == 0 || first[0] != '#' {
			setext, lines = 1, uint32(min(h.Lines().Len(), 15))
		}
		if line >= 1<<24 {
			break
		}
		out = append(out, uint32(line)<<8|lines<<4|setext<<3|uint32(h.Level))
	}
	return append(out, 0) // recorded, even when there are none
}

// blockOffset returns an offset on the first line of a top-level block.
func blockOffset(n ast.Node) (int, bool) {
	if fc, ok := n.(*ast.FencedCodeBlock); ok {
		if fc.Info != nil {
			return fc.Info.Segment.Start, true
		}
		if fc.Lines().Len() > 0 {
			// The opening fence is the line before the first content line.
			return fc.Lines().At(0).Start - 1, true
		}
		return 0, false
	}
	if n.Type() == ast.TypeBlock && n.Lines().Len() > 0 {
		return n.Lines().At(0).Start, true
	}
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		if off, ok := blockOffset(c); ok {
			return off, true
		}
	}
	return 0, false
}

func lineStart(b []byte, off int) int {
	off = min(max(off, 0), len(b))
	return bytes.LastIndexByte(b[:off], '\n') + 1
}

var (
	imageOrLink = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)
	refLink     = regexp.MustCompile(`\[([^\]]*)\]\[[^\]]*\]`)
	htmlTag     = regexp.MustCompile(`</?[A-Za-z][^>]*>`)
)

// headingText returns the plain text of a heading: links reduced to their
// text, emphasis and code markers and HTML tags removed. A code span keeps
// its text as written, angle brackets and all (## `<scrape_config>`).
func headingText(lines [][2]int, md []byte) string {
	var s string
	if len(lines) == 1 {
		s = string(bytes.TrimSpace(md[lines[0][0]:lines[0][1]]))
	} else {
		var b strings.Builder
		for i, seg := range lines {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.Write(bytes.TrimSpace(md[seg[0]:seg[1]]))
		}
		s = b.String()
	}
	if !strings.Contains(s, "`") {
		return oneSpaced(plainInline(s))
	}
	// Code spans stand aside while links, tags and markers go: a link's
	// text may be one ([`<remote_write>`](#remote_write)).
	var spans []string
	var held strings.Builder
	for rest := s; rest != ""; {
		start, end, inner, ok := codeSpan(rest)
		if !ok {
			held.WriteString(rest)
			break
		}
		held.WriteString(rest[:start])
		fmt.Fprintf(&held, "\uE000%d\uE001", len(spans))
		spans = append(spans, inner)
		rest = rest[end:]
	}
	out := heldSpan.ReplaceAllStringFunc(plainInline(held.String()), func(m string) string {
		i, err := strconv.Atoi(m[len("\uE000") : len(m)-len("\uE001")])
		if err != nil || i >= len(spans) {
			return m // the heading's own text
		}
		return spans[i]
	})
	return oneSpaced(out)
}

// oneSpaced returns s with its words separated by one space, as
// strings.Join(strings.Fields(s), " ") does, and s itself when it is so
// already: most headings are.
func oneSpaced(s string) string {
	space := true // before the first word: a leading space is not kept
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= utf8.RuneSelf:
			return strings.Join(strings.Fields(s), " ") // Unicode's spaces
		case c == ' ':
			if space {
				return strings.Join(strings.Fields(s), " ")
			}
			space = true
		case c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r':
			return strings.Join(strings.Fields(s), " ")
		default:
			space = false
		}
	}
	if space && s != "" {
		return strings.Join(strings.Fields(s), " ") // a trailing space
	}
	return s
}

// heldSpan is a code span set aside by headingText.
var heldSpan = regexp.MustCompile("\uE000[0-9]+\uE001")

// plainInline is markdown text outside code spans as plain text.
func plainInline(s string) string {
	// Most headings are plain words: the regexps run only when they could
	// match.
	if strings.Contains(s, "[") {
		s = imageOrLink.ReplaceAllString(s, "$1")
		s = refLink.ReplaceAllString(s, "$1")
	}
	if strings.Contains(s, "<") {
		s = htmlTag.ReplaceAllString(s, "")
	}
	if strings.ContainsAny(s, "*_`~") {
		s = stripMarkers(s)
	}
	return s
}

// stripMarkers removes the runs of emphasis and code markers (*, _, `, ~)
// that open or close a word: what the regular expression
//
//	(^|[^\w])[*_`~]+|[*_`~]+([^\w]|$)
//
// replaced by $1$2 removes, matched as Go's regexp package matches it
// (leftmost first, rune by rune), which the tests hold it to. The
// backtracking matcher took a tenth of chunking's time on PowerShell's
// about_ headings.
func stripMarkers(s string) string {
	var out []byte
	last := 0 // s[:last] is in out, or taken as it is
	for p := 0; p < len(s); {
		end, keep, ok := markersAt(s, p)
		if !ok {
			_, w := utf8.DecodeRuneInString(s[p:])
			p += w
			continue
		}
		if out == nil {
			out = make([]byte, 0, len(s))
		}
		out = append(append(out, s[last:p]...), keep...)
		last, p = end, end
	}
	if out == nil {
		return s
	}
	return string(append(out, s[last:]...))
}

// markersAt matches the expression of stripMarkers at s[p:], returning
// where the match ends and what replaces it.
func markersAt(s string, p int) (end int, keep string, ok bool) {
	// (^|[^\w])[*_`~]+, the anchor tried first.
	if p == 0 && isMarker(s[0]) {
		return markerRun(s, 0), "", true
	}
	if r, w := utf8.DecodeRuneInString(s[p:]); !isWordRune(r) {
		if q := markerRun(s, p+w); q > p+w {
			return q, s[p : p+w], true
		}
	}
	// [*_`~]+([^\w]|$): the longest run first, then shorter ones, whose
	// next byte is a marker, a word's only if it is '_'.
	if !isMarker(s[p]) {
		return 0, "", false
	}
	q := markerRun(s, p)
	if q == len(s) {
		return q, "", true
	}
	if r, w := utf8.DecodeRuneInString(s[q:]); !isWordRune(r) {
		return q + w, s[q : q+w], true
	}
	for k := q - 1; k > p; k-- {
		if s[k] != '_' {
			return k + 1, s[k : k+1], true
		}
	}
	return 0, "", false
}

func isMarker(c byte) bool { return c == '*' || c == '_' || c == '`' || c == '~' }

// markerRun returns the end of the run of markers starting at s[i:].
func markerRun(s string, i int) int {
	for i < len(s) && isMarker(s[i]) {
		i++
	}
	return i
}

// isWordRune reports whether r is in regexp's \w: [0-9A-Za-z_].
func isWordRune(r rune) bool {
	return r < utf8.RuneSelf && (r == '_' || '0' <= r && r <= '9' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z')
}

// codeSpan finds the first code span of s, as CommonMark reads one: a run
// of backticks closed by the next run of the same length. It returns the
// span's bounds and its text, stripped of one space each side when both
// are there.
func codeSpan(s string) (start, end int, inner string, ok bool) {
	for i := nextRun(s, 0); i < len(s); {
		n := runEnd(s, i)
		for j := nextRun(s, n); j < len(s); j = nextRun(s, runEnd(s, j)) {
			if k := runEnd(s, j); k-j == n-i {
				inner = s[n:j]
				if len(inner) > 1 && inner[0] == ' ' && inner[len(inner)-1] == ' ' && strings.Trim(inner, " ") != "" {
					inner = inner[1 : len(inner)-1]
				}
				return i, k, inner, true
			}
		}
		i = nextRun(s, n) // an unclosed run is text
	}
	return 0, 0, "", false
}

// nextRun is the offset of the first backtick of s from i, len(s) for none.
func nextRun(s string, i int) int {
	if k := strings.IndexByte(s[i:], '`'); k >= 0 {
		return i + k
	}
	return len(s)
}

// runEnd is the offset just past the run of backticks at i.
func runEnd(s string, i int) int {
	for i < len(s) && s[i] == '`' {
		i++
	}
	return i
}
