package compiler

import (
	"bytes"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// htmlText is an HTML file as markdown text: its headings as headings
// (chunk boundaries), its blocks as paragraphs and list items, and what a
// reader does not read (scripts, styles, navigation, forms) left out.
type htmlText struct {
	text  []byte
	title string // the <title>
	// lines maps each line of text (from 0) to the lines of the HTML file
	// (from 1) its text starts and ends on, so that results point into
	// the file.
	lines [][2]int
}

// skipped are elements whose content is not the page's text.
var skipped = map[atom.Atom]bool{
	atom.Script: true, atom.Style: true, atom.Noscript: true, atom.Template: true,
	atom.Nav: true, atom.Header: true, atom.Footer: true, atom.Aside: true,
	atom.Form: true, atom.Button: true, atom.Select: true, atom.Svg: true,
	atom.Iframe: true, atom.Object: true, atom.Canvas: true,
}

// blocks are elements that start a new paragraph.
var blocks = map[atom.Atom]bool{
	atom.P: true, atom.Div: true, atom.Section: true, atom.Article: true, atom.Main: true,
	atom.Blockquote: true, atom.Pre: true, atom.Table: true, atom.Tr: true, atom.Ul: true,
	atom.Ol: true, atom.Dl: true, atom.Dt: true, atom.Dd: true, atom.Figure: true,
	atom.Figcaption: true, atom.Hr: true, atom.Br: true, atom.Li: true, atom.Body: true,
	atom.H1: true, atom.H2: true, atom.H3: true, atom.H4: true, atom.H5: true, atom.H6: true,
}

var headingLevel = map[atom.Atom]int{atom.H1: 1, atom.H2: 2, atom.H3: 3, atom.H4: 4, atom.H5: 5, atom.H6: 6}

// convertHTML turns the HTML in data into markdown text.
func convertHTML(data []byte) htmlText {
	c := &htmlConverter{}
	z := html.NewTokenizer(bytes.NewReader(data))
	line := 1 // of the token being read in data
	for {
		tt := z.Next()
		raw := z.Raw()
		start := line
		line += bytes.Count(raw, []byte("\n"))
		switch tt {
		case html.ErrorToken:
			c.flush()
			c.out.text = c.b.Bytes()
			c.out.title = strings.Join(strings.Fields(c.title.String()), " ")
			return c.out
		case html.StartTagToken, html.SelfClosingTagToken:
			name, _ := z.TagName()
			c.startTag(atom.Lookup(name), tt == html.StartTagToken)
		case html.EndTagToken:
			name, _ := z.TagName()
			c.endTag(atom.Lookup(name))
		case html.TextToken:
			c.text(html.UnescapeString(string(raw)), start)
		}
	}
}

// htmlConverter gathers a page's text block by block.
type htmlConverter struct {
	out               htmlText
	b                 bytes.Buffer
	skip              int // depth inside skipped elements
	inTitle, inPre    bool
	title             strings.Builder
	para              strings.Builder // the block being gathered
	paraLine, paraEnd int             // where its text starts and ends in data
	prefix            string          // "# " for a heading, "- " for a list item
}

// flush ends the block being gathered: a line of text (a line each when
// preformatted), with the lines of data it came from.
func (c *htmlConverter) flush() {
	text := strings.TrimSpace(c.para.String())
	if !c.inPre {
		text = strings.Join(strings.Fields(text), " ")
	}
	if text != "" {
		if c.b.Len() > 0 {
			c.b.WriteString("\n")
			c.out.lines = append(c.out.lines, [2]int{c.paraLine, c.paraLine})
		}
		parts := strings.Split(c.prefix+text, "\n")
		for i, l := range parts {
			c.b.WriteString(l)
			c.b.WriteString("\n")
			span := [2]int{c.paraLine, c.paraEnd} // a paragraph joined into one line
			if len(parts) > 1 {                   // preformatted: a line each
				span = [2]int{min(c.paraLine+i, c.paraEnd), min(c.paraLine+i, c.paraEnd)}
			}
			c.out.lines = append(c.out.lines, span)
		}
	}
	c.para.Reset()
	c.prefix, c.paraLine, c.paraEnd = "", 0, 0
}

func (c *htmlConverter) startTag(a atom.Atom, opens bool) {
	if skipped[a] {
		if opens {
			c.skip++
		}
		return
	}
	if c.skip > 0 {
		return
	}
	switch {
	case a == atom.Title:
		c.inTitle = opens
	case blocks[a]:
		c.flush()
		if lvl := headingLevel[a]; lvl > 0 {
			c.prefix = strings.Repeat("#", lvl) + " "
		} else if a == atom.Li {
			c.prefix = "- "
		} else if a == atom.Pre {
			c.inPre = true
		}
	}
}

func (c *htmlConverter) endTag(a atom.Atom) {
	if skipped[a] {
		if c.skip > 0 {
			c.skip--
		}
		return
	}
	if c.skip > 0 {
		return
	}
	switch {
	case a == atom.Title:
		c.inTitle = false
	case blocks[a]:
		c.flush()
		if a == atom.Pre {
			c.inPre = false
		}
	case a == atom.Td || a == atom.Th:
		c.para.WriteString(" ")
	}
}

// text adds text that starts on line start of data.
func (c *htmlConverter) text(text string, start int) {
	if c.skip > 0 {
		return
	}
	if c.inTitle {
		c.title.WriteString(text)
		return
	}
	if trimmed := strings.TrimRight(text, " \t\r\n"); strings.TrimSpace(trimmed) != "" {
		// The lines the text starts and ends on, past the newlines around
		// it.
		lead := len(trimmed) - len(strings.TrimLeft(trimmed, " \t\r\n"))
		if c.paraLine == 0 {
			c.paraLine = start + strings.Count(trimmed[:lead], "\n")
		}
		c.paraEnd = start + strings.Count(trimmed, "\n")
	}
	c.para.WriteString(text)
}
