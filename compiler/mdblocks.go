package compiler

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"regexp"
	"strings"
	"sync"
)

// scanBlocks returns the top-level blocks of the markdown in src[body:] as
// topLevelBlocksWith does with blockParser (headings true) or plainParser
// (headings false),
// without goldmark: a port of goldmark's block parse (its parser's
// openBlocks, parseBlocks and closeBlocks, and its block parsers' Open,
// Continue and Close) for the parsers and wrappers chunk.go configures,
// that keeps of each block only what chunking reads: where it starts, and
// a heading's level and lines. goldmark builds a node, a list of line
// segments and a parse context for every block: a sixth of a build's
// CPU, the largest piece of a document's own work. This keeps its nodes
// in one slice, reused (BenchmarkScanBlocks, the PowerShell docs' blocks
// and headings: 193–203 ms by goldmark, 94–104 ms by the port).
//
// It gives up (ok false), and the caller asks goldmark, on what the port
// leaves out: tabs, carriage returns, vertical tabs, form feeds and NUL
// bytes (lineEnd), for which goldmark keeps columns and paddings.
// TestScanBlocksMatchGoldmark and FuzzScanBlocksMatchGoldmark hold it to
// goldmark's parse.
func scanBlocks(src []byte, body int, headings bool) (blocks []block, ok bool) {
	p := mdParsers.Get().(*mdParser)
	defer func() {
		if cap(p.nodes) <= maxPooledNodes {
			mdParsers.Put(p) // a huge document's nodes are not kept
		}
	}()
	p.reset(src[body:], headings)
	p.parseBlocks()
	if p.unported {
		return nil, false
	}
	return p.topLevel(body), true
}

var mdParsers = sync.Pool{New: func() any { return new(mdParser) }}

// maxPooledNodes bounds the nodes a pooled parser keeps room for: 65,536
// blocks, some 9 MB.
const maxPooledNodes = 1 << 16

type mdKind uint8

const (
	mdDocument mdKind = iota
	mdParagraph
	mdHeading
	mdThematicBreak
	mdCodeBlock
	mdFencedCode
	mdBlockquote
	mdList
	mdListItem
	mdHTML
	mdLinkDef
)

// mdNode is a block of the parse. Links are indices into mdParser.nodes,
// -1 for none.
type mdNode struct {
	kind                mdKind
	parent, first, last int32
	next, prev          int32
	children            int32
	level               int8 // a heading's
	marker              byte // a list's: '-', '+', '*', '.' or ')'
	offset              int  // a list item's
	html                int8 // an HTML block's type, 1 to 7
	off                 int  // where the block's first line (segment) starts; -1 none
	lineCount           int
	firstStop           int // the first line's end (the segment's Stop)
	lastStop            int // the last line's end
	bracket, defMark    bool
	setextFrom          int32
	segs                [][2]int // a paragraph's lines, when link definitions left gaps in them
	segFrom             int      // a '['-paragraph's lines in mdParser.paraSegs, from here
}

type mdState uint8

const (
	stContinue mdState = 1 << iota
	stClose
	stHasChildren
	stNoChildren
	stRequireParagraph
)

type openResult uint8

const (
	paragraphContinuation openResult = iota + 1
	newBlocksOpened
	noBlocksOpened
)

type mdParser struct {
	src      []byte
	headings bool
	nodes    []mdNode
	opened   []int32

	// the reader: the current line ends at stop, and is read from start
	start, stop int
	unported    bool // a byte the port leaves to goldmark: the reader stopped

	lineIndent int // the context's BlockOffset: where the line's text starts, or -1

	// the context's values
	skipList       bool
	emptyItemBlank bool
	tbPos          int
	fenceChar      byte
	fenceIndent    int
	fenceLength    int
	fenceNode      int32

	// the lines of the paragraphs whose first starts with '[', which the
	// link reference transformer reads: each paragraph's in a run, added
	// while it is the one open
	paraSegs [][2]int
	defs     segReader
}

func (p *mdParser) reset(md []byte, headings bool) {
	p.src, p.headings = md, headings
	p.nodes = p.nodes[:0]
	p.opened = p.opened[:0]
	p.paraSegs = p.paraSegs[:0]
	p.skipList, p.emptyItemBlank, p.tbPos = false, false, 0
	p.fenceNode = -1
	p.unported = false
	p.newNode(mdDocument)
	// goldmark's reader starts before the first line and advances to it.
	p.stop = 0
	p.advanceLine()
}

func (p *mdParser) newNode(kind mdKind) int32 {
	p.nodes = append(p.nodes, mdNode{kind: kind, parent: -1, first: -1, last: -1, next: -1, prev: -1, off: -1, setextFrom: -1})
	return int32(len(p.nodes) - 1)
}

func (p *mdParser) appendChild(parent, child int32) {
	c := &p.nodes[child]
	c.parent = parent
	par := &p.nodes[parent]
	c.prev = par.last
	c.next = -1
	if par.last >= 0 {
		p.nodes[par.last].next = child
	} else {
		par.first = child
	}
	par.last = child
	par.children++
}

func (p *mdParser) removeChild(child int32) {
	c := &p.nodes[child]
	par := &p.nodes[c.parent]
	if c.prev >= 0 {
		p.nodes[c.prev].next = c.next
	} else {
		par.first = c.next
	}
	if c.next >= 0 {
		p.nodes[c.next].prev = c.prev
	} else {
		par.last = c.prev
	}
	par.children--
	c.parent, c.next, c.prev = -1, -1, -1 // out of the tree
}

// The reader, goldmark's text.reader without tabs or padding.

func (p *mdParser) peekLine() []byte {
	if p.start >= 0 && p.start < len(p.src) {
		return p.src[p.start:p.stop]
	}
	return nil
}

func (p *mdParser) advanceLine() {
	p.start = p.stop
	if p.start < 0 || p.start >= len(p.src) {
		return
	}
	p.stop = len(p.src)
	i, unported := lineEnd(p.src[p.start:])
	if unported {
		// goldmark keeps columns and paddings for these bytes, which the
		// port does not: it reads no further, and gives the document up.
		p.unported = true
		p.start, p.stop = len(p.src), len(p.src)
		return
	}
	if i != -1 {
		p.stop = p.start + i + 1
	}
}

func (p *mdParser) advance(n int) {
	for ; n > 0 && p.start < len(p.src); n-- {
		if p.src[p.start] == '\n' {
			p.advanceLine()
			continue
		}
		p.start++
	}
}

// advanceToEOL moves to the current line's line feed, or the end: the
// line's first from the reader's position, as it holds no other.
func (p *mdParser) advanceToEOL() {
	if p.start >= len(p.src) {
		return
	}
	if p.src[p.stop-1] == '\n' {
		p.start = p.stop - 1
	} else {
		p.start = len(p.src)
	}
}

func (p *mdParser) skipBlankLines() bool {
	for {
		line := p.peekLine()
		if line == nil {
			return false
		}
		if !isBlank(line) {
			return true
		}
		p.advanceLine()
	}
}

// isBlank is goldmark's util.IsBlank for the bytes scanBlocks accepts.
func isBlank(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\n' {
			return false
		}
	}
	return true
}

// indentWidth is goldmark's util.IndentWidth without tabs: the spaces b
// starts with.
func indentWidth(b []byte) int {
	i := 0
	for i < len(b) && b[i] == ' ' {
		i++
	}
	return i
}

// indentPosition is goldmark's util.IndentPosition without tabs: width,
// when b starts with as many spaces, and -1 otherwise.
func indentPosition(b []byte, width int) int {
	if width == 0 {
		return 0
	}
	if indentWidth(b) >= width {
		return width
	}
	return -1
}

func (p *mdParser) lastOpened() int32 {
	if len(p.opened) == 0 {
		return -1
	}
	return p.opened[len(p.opened)-1]
}

func (p *mdParser) kindOf(n int32) mdKind {
	if n < 0 {
		return mdDocument
	}
	return p.nodes[n].kind
}

// parseBlocks is goldmark's parser.parseBlocks.
func (p *mdParser) parseBlocks() {
	for {
		if !p.skipBlankLines() || p.openBlocks(0) != newBlocksOpened {
			return
		}
		p.advanceLine()
		for len(p.opened) > 0 {
			l := len(p.opened)
			lastIndex := l - 1
			for i := 0; i < l; i++ {
				be := p.opened[i]
				if p.peekLine() == nil {
					p.closeBlocks(lastIndex, 0)
					p.advanceLine()
					return
				}
				if p.nodes[be].kind != mdParagraph {
					state := p.continueBlock(be)
					if state&stContinue != 0 {
						if state&stHasChildren != 0 && i == lastIndex {
							p.openBlocks(be)
							break
						}
						continue
					}
				}
				// The block ends here, or (a paragraph) continues
				// lazily: the blocks the line opens under the one
				// before decide.
				thisParent := int32(0)
				if i != 0 {
					thisParent = p.opened[i-1]
				}
				lastNode := p.opened[lastIndex]
				if p.openBlocks(thisParent) != paragraphContinuation {
					if lastIndex < len(p.opened) && p.opened[lastIndex] != lastNode {
						lastIndex-- // a setext heading took the paragraph's place
					}
					p.closeBlocks(lastIndex, i)
				}
				break
			}
			p.advanceLine()
		}
	}
}

// closeBlocks is goldmark's parser.closeBlocks.
func (p *mdParser) closeBlocks(from, to int) {
	for i := from; i >= to; i-- {
		n := p.opened[i]
		if p.nodes[n].kind == mdParagraph && p.nodes[n].parent >= 0 {
			p.transformParagraph(n, false)
		}
		if p.nodes[n].parent >= 0 { // not taken out by the transform
			p.closeBlock(n)
		}
	}
	if from == len(p.opened)-1 {
		p.opened = p.opened[:to]
	} else {
		p.opened = append(p.opened[:to], p.opened[from+1:]...)
	}
}

// transformParagraph is chunk.go's linkReferences (goldmark's link
// reference transformer, for the paragraphs that may hold a definition)
// on paragraph n, its lines trimmed as goldmark's paragraph closes them
// when trimmed is set: each definition at its start becomes a block
// before it, and takes its lines out. It reports whether the paragraph
// went, every line a definition's.
func (p *mdParser) transformParagraph(n int32, trimmed bool) bool {
	node := &p.nodes[n]
	if !p.headings || !node.bracket || !node.defMark {
		return false
	}
	segs := append([][2]int(nil), p.paraSegs[node.segFrom:node.segFrom+node.lineCount]...)
	if trimmed {
		for i := range segs {
			for segs[i][0] < segs[i][1] && isSpace(p.src[segs[i][0]]) {
				segs[i][0]++
			}
		}
		last := &segs[len(segs)-1]
		for last[1] > last[0] && isSpace(p.src[last[1]-1]) {
			last[1]--
		}
	}
	r := &p.defs
	r.reset(p.src, segs)
	var removes [][2]int
	for {
		off, start, end := r.linkReferenceDefinition()
		if start < 0 {
			break
		}
		def := p.newNode(mdLinkDef)
		p.addLine(def, off, off)
		p.insertBefore(n, def)
		if start == end {
			end++
		}
		removes = append(removes, [2]int{start, end})
	}
	// The lines left: goldmark takes each definition's out in turn,
	// copying the rest each time (quadratic in the definitions); they
	// come in order, apart, so one pass does.
	lines, next := segs[:0:0], 0
	for _, rm := range removes {
		lines = append(lines, segs[next:min(rm[0], len(segs))]...)
		next = max(next, min(rm[1], len(segs)))
	}
	lines = append(lines, segs[next:]...)
	node = &p.nodes[n]
	if len(lines) == 0 {
		p.removeChild(n)
		return true
	}
	if len(removes) > 0 {
		node.off, node.firstStop, node.lineCount = lines[0][0], lines[0][1], len(lines)
		node.lastStop = lines[len(lines)-1][1]
		node.segs = lines
	}
	return false
}

// insertBefore puts child into the children of at's parent, before at.
func (p *mdParser) insertBefore(at, child int32) {
	parent := p.nodes[at].parent
	c := &p.nodes[child]
	c.parent, c.next, c.prev = parent, at, p.nodes[at].prev
	if c.prev >= 0 {
		p.nodes[c.prev].next = child
	} else {
		p.nodes[parent].first = child
	}
	p.nodes[at].prev = child
	p.nodes[parent].children++
}

// The block parsers in the order goldmark tries them: by the priorities
// chunk.go gives them, those a line's first character triggers, then the
// free ones (indented code, paragraphs).
type mdBlockParser uint8

const (
	bpSetext mdBlockParser = iota
	bpThematic
	bpList
	bpListItem
	bpCode
	bpATX
	bpFenced
	bpBlockquote
	bpHTML
	bpParagraph
)

var (
	freeParsers     = []mdBlockParser{bpCode, bpParagraph}
	parsersByChar   [256][]mdBlockParser
	parsersNoHeadBy [256][]mdBlockParser
)

func init() {
	add := func(table *[256][]mdBlockParser, bp mdBlockParser, chars string) {
		for i := range len(chars) {
			table[chars[i]] = append(table[chars[i]], bp)
		}
	}
	for _, t := range []*[256][]mdBlockParser{&parsersByChar, &parsersNoHeadBy} {
		if t == &parsersByChar {
			add(t, bpSetext, "-=")
		}
		add(t, bpThematic, "-*_")
		add(t, bpList, "-+*0123456789")
		add(t, bpListItem, "-+*0123456789")
		if t == &parsersByChar {
			add(t, bpATX, "#")
		}
		add(t, bpFenced, "`~")
		add(t, bpBlockquote, ">")
		add(t, bpHTML, "<")
		for c := range t {
			if t[c] != nil {
				t[c] = append(t[c], freeParsers...)
			}
		}
	}
}

func canInterruptParagraph(bp mdBlockParser) bool {
	return bp != bpCode && bp != bpParagraph
}

// openBlocks is goldmark's parser.openBlocks.
func (p *mdParser) openBlocks(parent int32) openResult {
	result := noBlocksOpened
	continuable := false
	lastBlock := p.lastOpened()
	if lastBlock >= 0 {
		continuable = p.nodes[lastBlock].kind == mdParagraph
	}
retry:
	line := p.peekLine()
	w := indentWidth(line)
	pos := w
	if w >= len(line) {
		p.lineIndent = -1
	} else {
		p.lineIndent = pos
	}
	if line == nil || line[0] == '\n' {
		goto continuable
	}
	{
		bps := freeParsers
		if pos < len(line) {
			table := &parsersByChar
			if !p.headings {
				table = &parsersNoHeadBy
			}
			if t := table[line[pos]]; t != nil {
				bps = t
			}
		}
		for _, bp := range bps {
			if continuable && result == noBlocksOpened && !canInterruptParagraph(bp) {
				continue
			}
			if w > 3 && bp != bpCode {
				continue
			}
			lastBlock = p.lastOpened()
			last := lastBlock
			node, state := p.open(bp, parent)
			if node < 0 {
				continue
			}
			if state&stRequireParagraph != 0 {
				if last == p.nodes[parent].last {
					p.closeBlock(last)
					p.opened = p.opened[:len(p.opened)-1]
					if p.transformParagraph(last, true) {
						// Definitions all: the line is tried again,
						// with no paragraph to continue or turn into a
						// heading.
						continuable = false
						goto retry
					}
				}
			}
			p.appendChild(parent, node)
			result = newBlocksOpened
			p.opened = append(p.opened, node)
			if state&stHasChildren != 0 {
				parent = node
				goto retry
			}
			break
		}
	}
continuable:
	if result == noBlocksOpened && continuable {
		if state := p.continueBlock(lastBlock); state&stContinue != 0 {
			result = paragraphContinuation
		}
	}
	return result
}

// open is each block parser's Open: the node opened, or -1.
func (p *mdParser) open(bp mdBlockParser, parent int32) (int32, mdState) {
	switch bp {
	case bpSetext:
		return p.openSetext(parent)
	case bpThematic:
		if isThematicBreak(p.peekLine()) {
			p.advanceToEOL()
			return p.newNode(mdThematicBreak), stNoChildren
		}
	case bpList:
		return p.openList(parent)
	case bpListItem:
		return p.openListItem(parent)
	case bpCode:
		line := p.peekLine()
		pos := indentPosition(line, 4)
		if pos < 0 || isBlank(line) {
			return -1, stNoChildren
		}
		n := p.newNode(mdCodeBlock)
		p.addLine(n, p.start+pos, p.stop)
		p.advanceToEOL()
		return n, stNoChildren
	case bpATX:
		return p.openATX()
	case bpFenced:
		return p.openFenced()
	case bpBlockquote:
		if p.blockquote() {
			return p.newNode(mdBlockquote), stHasChildren
		}
	case bpHTML:
		return p.openHTML()
	case bpParagraph:
		line := p.peekLine()
		if isBlank(line) {
			return -1, stNoChildren
		}
		n := p.newNode(mdParagraph)
		p.addParagraphLine(n, line)
		p.advanceToEOL()
		return n, stNoChildren
	}
	return -1, stNoChildren
}

// continueBlock is each block parser's Continue.
func (p *mdParser) continueBlock(n int32) mdState {
	node := &p.nodes[n]
	switch node.kind {
	case mdParagraph:
		line := p.peekLine()
		if isBlank(line) {
			return stClose
		}
		p.addParagraphLine(n, line)
		p.advanceToEOL()
		return stContinue | stNoChildren
	case mdHeading, mdThematicBreak:
		return stClose
	case mdCodeBlock:
		line := p.peekLine()
		pos := indentPosition(line, 4)
		switch {
		case isBlank(line) && pos < 0:
			p.addLine(n, p.stop-1, p.stop)
		case pos < 0:
			return stClose
		default:
			p.addLine(n, p.start+pos, p.stop)
		}
		p.advanceToEOL()
		return stContinue | stNoChildren
	case mdFencedCode:
		return p.continueFenced(n)
	case mdBlockquote:
		if p.blockquote() {
			return stContinue | stHasChildren
		}
		return stClose
	case mdList:
		return p.continueList(n)
	case mdListItem:
		return p.continueListItem(n)
	case mdHTML:
		return p.continueHTML(n)
	}
	return stClose
}

// closeBlock is each block parser's Close, with chunk.go's wrappers.
func (p *mdParser) closeBlock(n int32) {
	switch p.nodes[n].kind {
	case mdParagraph:
		// goldmark's paragraph keeps its lines, trimmed; chunk.go's
		// startOnlyParagraphs keeps where the first starts (the same
		// line). Neither changes where the block starts.
	case mdHeading:
		if f := p.nodes[n].setextFrom; f >= 0 {
			p.closeSetext(n, f)
		}
	case mdFencedCode:
		if p.fenceNode == n {
			p.fenceNode = -1
		}
	}
}

func (p *mdParser) addLine(n int32, start, stop int) {
	node := &p.nodes[n]
	if node.lineCount == 0 {
		node.off, node.firstStop = start, stop
	}
	node.lineCount++
	node.lastStop = stop
}

// addParagraphLine adds the current line, from the reader's position, to
// paragraph n, noting what the link reference transformer looks at.
func (p *mdParser) addParagraphLine(n int32, line []byte) {
	node := &p.nodes[n]
	if node.lineCount == 0 {
		first := bytes.TrimLeft(line, " ")
		node.bracket = len(first) > 0 && first[0] == '['
		node.segFrom = len(p.paraSegs)
	}
	if node.bracket {
		if !node.defMark && bytes.Contains(line, []byte("]:")) {
			node.defMark = true
		}
		p.paraSegs = append(p.paraSegs, [2]int{p.start, p.stop})
	}
	p.addLine(n, p.start, p.stop)
}

// isThematicBreak is goldmark's, without tabs.
func isThematicBreak(line []byte) bool {
	pos := indentWidth(line)
	if pos > 3 {
		return false
	}
	mark := byte(0)
	count := 0
	for i := pos; i < len(line); i++ {
		c := line[i]
		if c == ' ' || c == '\n' {
			continue
		}
		if mark == 0 {
			mark = c
			count = 1
			if mark == '*' || mark == '-' || mark == '_' {
				continue
			}
			return false
		}
		if c != mark {
			return false
		}
		count++
	}
	return count > 2
}

// ATX headings.

func (p *mdParser) openATX() (int32, mdState) {
	line := p.peekLine()
	pos := p.lineIndent
	if pos < 0 {
		return -1, stNoChildren
	}
	i := pos
	for i < len(line) && line[i] == '#' {
		i++
	}
	level := i - pos
	if i == pos || level > 6 {
		return -1, stNoChildren
	}
	node := func() int32 {
		n := p.newNode(mdHeading)
		p.nodes[n].level = int8(level)
		return n
	}
	if i == len(line) {
		return node(), stNoChildren
	}
	l := len(line[i:]) - len(bytes.TrimLeft(line[i:], " \n"))
	if l == 0 {
		return -1, stNoChildren
	}
	start := min(i+l, len(line)-1)
	hs, he := p.start+start, p.start+len(line)
	for he > hs && (p.src[he-1] == ' ' || p.src[he-1] == '\n') {
		he--
	}
	n := node()
	if he == hs {
		p.advanceToEOL()
		return n, stNoChildren
	}
	text := p.src[hs:he]
	stop := len(text)
	i = stop - 1
	for text[i] == '#' && i > 0 {
		i--
	}
	if i == 0 && text[0] == '#' {
		p.advanceToEOL()
		return n, stNoChildren
	}
	if i != stop-1 && (text[i] == ' ' || text[i] == '\n') {
		stop = i
		for stop > 0 && (text[stop-1] == ' ' || text[stop-1] == '\n') {
			stop--
		}
	}
	p.addLine(n, hs, hs+stop)
	p.advanceToEOL()
	return n, stNoChildren
}

// Setext headings.

// matchesSetextHeadingBar is goldmark's.
func matchesSetextHeadingBar(line []byte) (byte, bool) {
	start, end := 0, len(line)
	space := len(line) - len(bytes.TrimLeft(line, " "))
	if space > 3 {
		return 0, false
	}
	start += space
	level1 := len(line[start:end]) - len(bytes.TrimLeft(line[start:end], "="))
	c := byte('=')
	var level2 int
	if level1 == 0 {
		level2 = len(line[start:end]) - len(bytes.TrimLeft(line[start:end], "-"))
		c = '-'
	}
	if line[end-1] == ' ' || line[end-1] == '\n' {
		end -= len(line[start:end]) - len(bytes.TrimRight(line[start:end], " \n"))
	}
	if !((level1 > 0 && start+level1 == end) || (level2 > 0 && start+level2 == end)) {
		return 0, false
	}
	return c, true
}

func (p *mdParser) openSetext(parent int32) (int32, mdState) {
	last := p.lastOpened()
	if last < 0 || p.nodes[last].kind != mdParagraph || p.nodes[last].parent != parent {
		return -1, stNoChildren
	}
	c, ok := matchesSetextHeadingBar(p.peekLine())
	if !ok {
		return -1, stNoChildren
	}
	n := p.newNode(mdHeading)
	p.nodes[n].level = 1
	if c == '-' {
		p.nodes[n].level = 2
	}
	p.nodes[n].setextFrom = last
	return n, stNoChildren | stRequireParagraph
}

// closeSetext gives the heading its paragraph's lines and takes the
// paragraph out, as goldmark's setext parser does.
func (p *mdParser) closeSetext(n, para int32) {
	h, src := &p.nodes[n], &p.nodes[para]
	h.off, h.lineCount, h.firstStop, h.lastStop = src.off, src.lineCount, src.firstStop, src.lastStop
	h.segs = src.segs
	if src.parent >= 0 {
		p.removeChild(para)
	}
}

// Fenced code.

func (p *mdParser) openFenced() (int32, mdState) {
	line := p.peekLine()
	pos := p.lineIndent
	if pos < 0 || (line[pos] != '`' && line[pos] != '~') {
		return -1, stNoChildren
	}
	fenceChar := line[pos]
	i := pos
	for i < len(line) && line[i] == fenceChar {
		i++
	}
	if i-pos < 3 {
		return -1, stNoChildren
	}
	infoStart := -1
	if i < len(line)-1 {
		rest := line[i:]
		left := len(rest) - len(bytes.TrimLeft(rest, " \n"))
		right := len(rest) - len(bytes.TrimRight(rest, " \n"))
		if left < len(rest)-right {
			value := rest[left : len(rest)-right]
			if fenceChar == '`' && bytes.IndexByte(value, '`') > -1 {
				return -1, stNoChildren
			}
			if s, e := p.start+i+left, p.stop-right; s != e {
				infoStart = s
			}
		}
	}
	n := p.newNode(mdFencedCode)
	if infoStart >= 0 {
		p.nodes[n].off = infoStart // where blockOffset takes it from
	}
	p.fenceChar, p.fenceIndent, p.fenceLength, p.fenceNode = fenceChar, pos, i-pos, n
	return n, stNoChildren
}

func (p *mdParser) continueFenced(n int32) mdState {
	line := p.peekLine()
	pos := indentWidth(line)
	if pos < 4 {
		i := pos
		for i < len(line) && line[i] == p.fenceChar {
			i++
		}
		if i-pos >= p.fenceLength && isBlank(line[i:]) {
			p.advanceToEOL()
			return stClose
		}
	}
	at := indentPosition(line, p.fenceIndent)
	if at < 0 {
		at = max(0, firstNonSpace(line))
	}
	node := &p.nodes[n]
	if node.lineCount == 0 && node.off < 0 {
		// The opening fence is the line before: goldmark's first line's
		// start, less one (blockOffset).
		node.off = p.start + at - 1
	}
	node.lineCount++
	p.advanceToEOL()
	return stContinue | stNoChildren
}

// firstNonSpace is goldmark's util.FirstNonSpacePosition without tabs.
func firstNonSpace(b []byte) int {
	for i, c := range b {
		if c == ' ' {
			continue
		}
		if c == '\n' {
			return -1
		}
		return i
	}
	return -1
}

// Block quotes.

func (p *mdParser) blockquote() bool {
	line := p.peekLine()
	pos := indentWidth(line)
	if pos > 3 || pos >= len(line) || line[pos] != '>' {
		return false
	}
	pos++
	if pos >= len(line) || line[pos] == '\n' {
		p.advance(pos)
		return true
	}
	p.advance(pos)
	if line[pos] == ' ' {
		p.advance(1)
	}
	return true
}

// Lists.

type listItemType uint8

const (
	notList listItemType = iota
	bulletList
	orderedList
)

// parseListItem is goldmark's.
func parseListItem(line []byte) ([6]int, listItemType) {
	i := 0
	l := len(line)
	ret := [6]int{}
	for ; i < l && line[i] == ' '; i++ {
	}
	if i > 3 {
		return ret, notList
	}
	ret[1], ret[2] = i, i
	var typ listItemType
	if i < l && (line[i] == '-' || line[i] == '*' || line[i] == '+') {
		i++
		ret[3] = i
		typ = bulletList
	} else if i < l {
		for ; i < l && '0' <= line[i] && line[i] <= '9'; i++ {
		}
		ret[3] = i
		if ret[3] == ret[2] || ret[3]-ret[2] > 9 {
			return ret, notList
		}
		if i < l && (line[i] == '.' || line[i] == ')') {
			i++
			ret[3] = i
		} else {
			return ret, notList
		}
		typ = orderedList
	} else {
		return ret, notList
	}
	if i < l && line[i] != '\n' {
		if indentWidth(line[i:]) == 0 {
			return ret, notList
		}
	}
	if i >= l {
		ret[4], ret[5] = -1, -1
		return ret, typ
	}
	ret[4] = i
	ret[5] = len(line)
	if line[ret[5]-1] == '\n' && line[i] != '\n' {
		ret[5]--
	}
	return ret, typ
}

// calcListOffset is goldmark's.
func calcListOffset(source []byte, match [6]int) int {
	if match[4] < 0 || isBlank(source[match[4]:]) {
		return 1
	}
	offset := indentWidth(source[match[4]:])
	if offset > 4 {
		offset = 1
	}
	return offset
}

func (p *mdParser) lastItemOffset(list int32) int {
	if last := p.nodes[list].last; last >= 0 {
		return p.nodes[last].offset
	}
	return 0
}

func (p *mdParser) openList(parent int32) (int32, mdState) {
	last := p.lastOpened()
	if p.kindOf(last) == mdList || p.skipList {
		p.skipList = false
		return -1, stNoChildren
	}
	line := p.peekLine()
	match, typ := parseListItem(line)
	if typ == notList {
		return -1, stNoChildren
	}
	start := -1
	if typ == orderedList {
		start = 0
		for _, c := range line[match[2] : match[3]-1] {
			start = start*10 + int(c-'0')
		}
	}
	if last >= 0 && p.nodes[last].kind == mdParagraph && p.nodes[last].parent == parent {
		if typ == orderedList && start != 1 {
			return -1, stNoChildren
		}
		if match[4] < 0 || isBlank(line[match[4]:match[5]]) {
			return -1, stNoChildren
		}
	}
	n := p.newNode(mdList)
	p.nodes[n].marker = line[match[3]-1]
	p.emptyItemBlank = false
	return n, stHasChildren
}

func (p *mdParser) continueList(n int32) mdState {
	line := p.peekLine()
	lastItem := p.nodes[n].last
	if isBlank(line) {
		if p.nodes[lastItem].children == 0 {
			p.emptyItemBlank = true
		}
		return stContinue | stHasChildren
	}
	offset := p.lastItemOffset(n)
	lastIsEmpty := p.nodes[lastItem].children == 0
	indent := indentWidth(line)
	if indent < offset || lastIsEmpty {
		if indent < 4 {
			match, typ := parseListItem(line)
			if typ != notList && match[1]-offset < 4 {
				marker := line[match[3]-1]
				listMarker := p.nodes[n].marker
				ordered := typ == orderedList
				if marker != listMarker || ordered != (listMarker == '.' || listMarker == ')') {
					return stClose
				}
				isTb := false
				if p.stop > p.tbPos {
					isTb = isThematicBreak(line[match[3]-1:])
					p.tbPos = p.stop
				}
				if isTb {
					isHeading := false
					if last := p.lastOpened(); last >= 0 && p.nodes[last].kind == mdParagraph {
						if c, ok := matchesSetextHeadingBar(line[match[3]-1:]); ok && c == '-' {
							isHeading = true
						}
					}
					if !isHeading {
						return stClose
					}
				}
				return stContinue | stHasChildren
			}
		}
		if !lastIsEmpty {
			return stClose
		}
	}
	if lastIsEmpty && indent < offset {
		return stClose
	}
	if p.emptyItemBlank {
		return stClose
	}
	return stContinue | stHasChildren
}

func (p *mdParser) openListItem(parent int32) (int32, mdState) {
	if p.kindOf(parent) != mdList {
		return -1, stNoChildren
	}
	offset := p.lastItemOffset(parent)
	line := p.peekLine()
	match, typ := parseListItem(line)
	if typ == notList {
		return -1, stNoChildren
	}
	if match[1]-offset > 3 {
		return -1, stNoChildren
	}
	p.emptyItemBlank = false
	itemOffset := calcListOffset(line, match)
	n := p.newNode(mdListItem)
	p.nodes[n].offset = match[3] + itemOffset
	if match[4] < 0 || isBlank(line[match[4]:match[5]]) {
		return n, stNoChildren
	}
	pos := indentPosition(line[match[4]:], itemOffset)
	p.advance(match[3] + pos)
	return n, stHasChildren
}

func (p *mdParser) continueListItem(n int32) mdState {
	line := p.peekLine()
	if isBlank(line) {
		p.advanceToEOL()
		return stContinue | stHasChildren
	}
	offset := p.lastItemOffset(p.nodes[n].parent)
	isEmpty := p.nodes[n].children == 0 && p.emptyItemBlank
	indent := indentWidth(line)
	if (isEmpty || indent < offset) && indent < 4 {
		if _, typ := parseListItem(line); typ != notList {
			p.skipList = true
			return stClose
		}
		if !isEmpty {
			return stClose
		}
	}
	p.advance(indentPosition(line, offset))
	return stContinue | stHasChildren
}

// HTML blocks, with goldmark's expressions.

var allowedBlockTags = func() map[string]bool {
	m := map[string]bool{}
	for _, t := range strings.Fields(`address article aside base basefont blockquote body caption center
		col colgroup dd details dialog dir div dl dt fieldset figcaption figure footer form frame
		frameset h1 h2 h3 h4 h5 h6 head header hr html iframe legend li link main menu menuitem
		meta nav noframes ol optgroup option p param search section summary table tbody td tfoot
		th thead title tr track ul`) {
		m[t] = true
	}
	return m
}()

const htmlAttribute = `(?:[\r\n \t]+[a-zA-Z_:][a-zA-Z0-9:._-]*(?:[\r\n \t]*=[\r\n \t]*(?:[^\"'=<>` + "`" + `\x00-\x20]+|'[^']*'|"[^"]*"))?)`

var (
	htmlType1Open  = regexp.MustCompile(`(?i)^[ ]{0,3}<(script|pre|style|textarea)(?:\s.*|>.*|/>.*|)(?:\r\n|\n)?$`)
	htmlType1Close = regexp.MustCompile(`(?i)^.*</(?:script|pre|style|textarea)>.*`)
	htmlType2Open  = regexp.MustCompile(`^[ ]{0,3}<!\-\-`)
	htmlType3Open  = regexp.MustCompile(`^[ ]{0,3}<\?`)
	htmlType4Open  = regexp.MustCompile(`^[ ]{0,3}<![A-Z]+.*(?:\r\n|\n)?$`)
	htmlType5Open  = regexp.MustCompile(`^[ ]{0,3}<\!\[CDATA\[`)
	htmlType6      = regexp.MustCompile(`^[ ]{0,3}<(?:/[ ]*)?([a-zA-Z]+[a-zA-Z0-9\-]*)(?:[ ].*|>.*|/>.*|)(?:\r\n|\n)?$`)
	htmlType7      = regexp.MustCompile(`^[ ]{0,3}<(/[ ]*)?([a-zA-Z]+[a-zA-Z0-9\-]*)(` + htmlAttribute + `*)[ ]*(?:>|/>)[ ]*(?:\r\n|\n)?$`)
	htmlCloses     = [...][]byte{2: []byte("-->"), 3: []byte("?>"), 4: []byte(">"), 5: []byte("]]>")}
)

func (p *mdParser) openHTML() (int32, mdState) {
	line := p.peekLine()
	last := p.lastOpened()
	typ := 0
	switch {
	case htmlType1Open.Match(line):
		typ = 1
	case htmlType2Open.Match(line):
		typ = 2
	case htmlType3Open.Match(line):
		typ = 3
	case htmlType4Open.Match(line):
		typ = 4
	case htmlType5Open.Match(line):
		typ = 5
	default:
		if m := htmlType7.FindSubmatchIndex(line); m != nil {
			isClose := m[2] > -1 && bytes.Equal(line[m[2]:m[3]], []byte("/"))
			hasAttr := m[6] != m[7]
			tag := strings.ToLower(string(line[m[4]:m[5]]))
			switch {
			case allowedBlockTags[tag]:
				typ = 6
			case tag != "script" && tag != "style" && tag != "pre" && p.kindOf(last) != mdParagraph && !(isClose && hasAttr):
				typ = 7
			}
		}
	}
	if typ == 0 {
		if m := htmlType6.FindSubmatchIndex(line); m != nil && allowedBlockTags[strings.ToLower(string(line[m[2]:m[3]]))] {
			typ = 6
		}
	}
	if typ == 0 {
		return -1, stNoChildren
	}
	start, stop := p.start, p.stop
	p.advanceToEOL()
	n := p.newNode(mdHTML)
	p.nodes[n].html = int8(typ)
	p.addLine(n, start, stop)
	return n, stNoChildren
}

func (p *mdParser) continueHTML(n int32) mdState {
	node := &p.nodes[n]
	line := p.peekLine()
	switch node.html {
	case 1:
		if node.lineCount == 1 && htmlType1Close.Match(p.src[node.off:node.firstStop]) {
			return stClose
		}
		if htmlType1Close.Match(line) {
			p.advanceToEOL()
			return stClose
		}
	case 2, 3, 4, 5:
		closing := htmlCloses[node.html]
		if node.lineCount == 1 && bytes.Contains(p.src[node.off:node.firstStop], closing) {
			return stClose
		}
		if bytes.Contains(line, closing) {
			p.advanceToEOL()
			return stClose
		}
	default:
		if isBlank(line) {
			return stClose
		}
	}
	p.addLine(n, p.start, p.stop)
	p.advanceToEOL()
	return stContinue | stNoChildren
}

// The blocks of the document, as topLevelBlocksWith reads goldmark's.

func (p *mdParser) topLevel(body int) []block {
	blocks := make([]block, 0, p.nodes[0].children)
	for n := p.nodes[0].first; n >= 0; n = p.nodes[n].next {
		off, ok := p.blockOffset(n)
		if !ok {
			continue
		}
		b := block{start: body + lineStart(p.src, off)}
		if node := &p.nodes[n]; node.kind == mdHeading {
			heading := headingText(p.headingLines(node), p.src)
			b.level, b.heading, b.cut = int(node.level), cutText(heading, maxHeadingText), len(heading) > maxHeadingText
		}
		blocks = append(blocks, b)
	}
	return blocks
}

// blockOffset is chunk.go's blockOffset on the port's nodes.
func (p *mdParser) blockOffset(n int32) (int, bool) {
	node := &p.nodes[n]
	switch node.kind {
	case mdFencedCode:
		return node.off, node.off >= 0
	case mdParagraph, mdHeading, mdCodeBlock, mdHTML, mdLinkDef:
		if node.lineCount > 0 {
			return node.off, true
		}
	}
	for c := node.first; c >= 0; c = p.nodes[c].next {
		if off, ok := p.blockOffset(c); ok {
			return off, true
		}
	}
	return 0, false
}

// headingLines are a top-level heading's lines as goldmark's segments: an
// ATX heading's text, or a setext heading's paragraph lines, each from
// its start (top-level lines start at the line's start) to its end.
func (p *mdParser) headingLines(node *mdNode) [][2]int {
	if node.lineCount == 0 {
		return nil
	}
	if node.setextFrom < 0 {
		return [][2]int{{node.off, node.firstStop}} // an ATX heading's one line
	}
	if node.segs != nil {
		return node.segs
	}
	lines := make([][2]int, 0, node.lineCount)
	for at := node.off; len(lines) < node.lineCount; {
		end := at + bytes.IndexByte(p.src[at:node.lastStop], '\n') + 1
		if end <= at {
			end = node.lastStop
		}
		lines = append(lines, [2]int{at, end})
		at = end
	}
	return lines
}

// Link reference definitions, read as goldmark reads them from a
// paragraph's lines.

// segReader is goldmark's text.blockReader without tabs: a reader over a
// paragraph's line segments.
type segReader struct {
	src         []byte
	segs        [][2]int
	line        int
	start, stop int
	last        int
}

const readerEOF = 0xff // goldmark's text.EOF

func (r *segReader) reset(src []byte, segs [][2]int) {
	r.src, r.segs = src, segs
	r.line, r.start, r.stop, r.last = -1, -1, -1, 0
	if len(segs) > 0 {
		r.last = segs[len(segs)-1][1]
	}
	r.advanceLine()
}

func (r *segReader) advanceLine() {
	r.line++
	if r.line < len(r.segs) {
		r.start, r.stop = r.segs[r.line][0], r.segs[r.line][1]
	}
}

func (r *segReader) valid() bool {
	return r.line < len(r.segs) && r.start >= 0 && r.start < r.last
}

func (r *segReader) peekLine() []byte {
	if r.valid() {
		return r.src[r.start:r.stop]
	}
	return nil
}

func (r *segReader) peek() byte {
	if r.valid() {
		return r.src[r.start]
	}
	return readerEOF
}

func (r *segReader) advance(n int) {
	if n < r.stop-r.start {
		r.start += n
		return
	}
	for ; n > 0; n-- {
		if r.start >= r.stop-1 && r.stop < r.last {
			r.advanceLine()
			continue
		}
		r.start++
	}
}

// skipSpaces is goldmark's skipSpacesReader: it skips spaces and line
// ends, and reports how many.
func (r *segReader) skipSpaces() int {
	n := 0
	for {
		line := r.peekLine()
		if line == nil {
			return n
		}
		for _, c := range line {
			if !isSpace(c) {
				return n
			}
			n++
			r.advance(1)
		}
	}
}

// findClosure is goldmark's findClosureReader with the options links use
// (no nesting, across lines, advancing): whether closer closes opener
// before another opener or the end.
func (r *segReader) findClosure(opener, closer byte) bool {
	for {
		bs := r.peekLine()
		if bs == nil {
			return false
		}
		for i := 0; i < len(bs); i++ {
			c := bs[i]
			switch {
			case c == '\\' && i < len(bs)-1 && isPunct(bs[i+1]):
				i++
			case c == closer:
				r.advance(i + 1)
				return true
			case c == opener:
				return false
			}
		}
		r.advanceLine()
	}
}

// findLabel is findClosure for a link label, which must not be blank: it
// reports whether one was found and held anything but spaces.
func (r *segReader) findLabel() (found, blank bool) {
	blank = true
	for {
		bs := r.peekLine()
		if bs == nil {
			return false, blank
		}
		for i := 0; i < len(bs); i++ {
			c := bs[i]
			switch {
			case c == '\\' && i < len(bs)-1 && isPunct(bs[i+1]):
				blank = false
				i++
			case c == ']':
				r.advance(i + 1)
				return true, blank
			case c == '[':
				return false, blank
			default:
				if !isSpace(c) {
					blank = false
				}
			}
		}
		r.advanceLine()
	}
}

// linkDestination is goldmark's parseLinkDestination: whether a
// destination follows.
func (r *segReader) linkDestination() bool {
	r.skipSpaces()
	line := r.peekLine()
	if r.peek() == '<' {
		for i := 1; i < len(line); i++ {
			c := line[i]
			if c == '\\' && i < len(line)-1 && isPunct(line[i+1]) {
				i++
				continue
			}
			if c == '>' {
				r.advance(i + 1)
				return true
			}
		}
		return false
	}
	opened, i := 0, 0
	for i < len(line) {
		c := line[i]
		if c == '\\' && i < len(line)-1 && isPunct(line[i+1]) {
			i += 2
			continue
		}
		if c == '(' {
			opened++
		} else if c == ')' {
			opened--
			if opened < 0 {
				break
			}
		} else if isSpace(c) {
			break
		}
		i++
	}
	r.advance(i)
	return i != 0
}

// linkReferenceDefinition is goldmark's parseLinkReferenceDefinition: a
// definition's first line's offset, and the lines it takes, [start, end);
// start is -1 when no definition starts here.
func (r *segReader) linkReferenceDefinition() (off, start, end int) {
	r.skipSpaces()
	line := r.peekLine()
	if line == nil {
		return 0, -1, -1
	}
	startLine := r.line
	pos := indentWidth(line)
	if pos > 3 {
		return 0, -1, -1
	}
	if pos != 0 {
		pos++
	}
	if pos >= len(line) || line[pos] != '[' {
		return 0, -1, -1
	}
	off = r.start
	r.advance(pos + 1)
	if found, blank := r.findLabel(); !found || blank {
		return 0, -1, -1
	}
	if r.peek() != ':' {
		return 0, -1, -1
	}
	r.advance(1)
	r.skipSpaces()
	if !r.linkDestination() {
		return 0, -1, -1
	}
	line = r.peekLine()
	isNewLine := line == nil || isBlank(line)
	endLine := r.line
	spaces := r.skipSpaces()
	opener := r.peek()
	if opener != '"' && opener != '\'' && opener != '(' {
		if !isNewLine {
			return 0, -1, -1
		}
		return off, startLine, endLine + 1
	}
	if spaces == 0 {
		return 0, -1, -1
	}
	r.advance(1)
	closer := opener
	if opener == '(' {
		closer = ')'
	}
	if !r.findClosure(opener, closer) {
		if !isNewLine {
			return 0, -1, -1
		}
		r.advanceLine()
		return off, startLine, endLine + 1
	}
	if line = r.peekLine(); line != nil && !isBlank(line) {
		if !isNewLine {
			return 0, -1, -1
		}
		return off, startLine, endLine
	}
	return off, startLine, r.line + 1
}

// isSpace is goldmark's util.IsSpace for the bytes scanBlocks accepts.
func isSpace(c byte) bool { return c == ' ' || c == '\n' }

// isPunct is goldmark's util.IsPunct: ASCII punctuation.
func isPunct(c byte) bool {
	return '!' <= c && c <= '/' || ':' <= c && c <= '@' || '[' <= c && c <= '`' || '{' <= c && c <= '~'
}

// lineEnd returns the offset of the first line feed in b, or -1, and
// whether a byte the port leaves to goldmark comes first: a tab, a
// carriage return, a vertical tab, a form feed, a NUL byte, or another
// control byte under 14 (which goldmark reads as text; the port gives
// those up too). It tests eight bytes at a time for an ASCII byte under
// 14: one scan both ends the line and checks it.
func lineEnd(b []byte) (int, bool) {
	const (
		ones = 0x0101010101010101
		high = 0x8080808080808080
	)
	i := 0
	for ; i+8 <= len(b); i += 8 {
		w := binary.LittleEndian.Uint64(b[i:])
		if under := ^((w | high) - 14*ones) & high &^ w; under != 0 {
			at := i + bits.TrailingZeros64(under)/8
			return at, b[at] != '\n'
		}
	}
	for ; i < len(b); i++ {
		if c := b[i]; c < 14 {
			return i, c != '\n'
		}
	}
	return -1, false
}
