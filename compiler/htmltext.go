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
	var out htmlText
	var b bytes.Buffer
	z := html.NewTokenizer(bytes.NewReader(data))
	line := 1 // of the token being read in data
	skip := 0 // depth inside skipped elements
	inTitle, inPre := false, false
	var title strings.Builder
	var para strings.Builder  // the block being gathered
	paraLine, paraEnd := 0, 0 // where its text starts and ends in data
	prefix := ""              // "# " for a heading, "- " for a list item
	flush := func() {
		text := strings.TrimSpace(para.String())
		if !inPre {
			text = strings.Join(strings.Fields(text), " ")
		}
		if text != "" {
			if b.Len() > 0 {
				b.WriteString("\n")
				out.lines = append(out.lines, [2]int{paraLine, paraLine})
			}
			parts := strings.Split(prefix+text, "\n")
			for i, l := range parts {
				b.WriteString(l)
				b.WriteString("\n")
				span := [2]int{paraLine, paraEnd} // a paragraph joined into one line
				if len(parts) > 1 {               // preformatted: a line each
					span = [2]int{min(paraLine+i, paraEnd), min(paraLine+i, paraEnd)}
				}
				out.lines = append(out.lines, span)
			}
		}
		para.Reset()
		prefix, paraLine, paraEnd = "", 0, 0
	}
	for {
		tt := z.Next()
		raw := z.Raw()
		start := line
		line += bytes.Count(raw, []byte("\n"))
		switch tt {
		case html.ErrorToken:
			flush()
			out.text = b.Bytes()
			out.title = strings.Join(strings.Fields(title.String()), " ")
			return out
		case html.StartTagToken, html.SelfClosingTagToken:
			name, _ := z.TagName()
			a := atom.Lookup(name)
			if skipped[a] {
				if tt == html.StartTagToken {
					skip++
				}
				continue
			}
			if skip > 0 {
				continue
			}
			switch {
			case a == atom.Title:
				inTitle = tt == html.StartTagToken
			case blocks[a]:
				flush()
				if lvl := headingLevel[a]; lvl > 0 {
					prefix = strings.Repeat("#", lvl) + " "
				} else if a == atom.Li {
					prefix = "- "
				} else if a == atom.Pre {
					inPre = true
				}
			}
		case html.EndTagToken:
			name, _ := z.TagName()
			a := atom.Lookup(name)
			if skipped[a] {
				if skip > 0 {
					skip--
				}
				continue
			}
			if skip > 0 {
				continue
			}
			switch {
			case a == atom.Title:
				inTitle = false
			case blocks[a]:
				flush()
				if a == atom.Pre {
					inPre = false
				}
			case a == atom.Td || a == atom.Th:
				para.WriteString(" ")
			}
		case html.TextToken:
			if skip > 0 {
				continue
			}
			text := html.UnescapeString(string(raw))
			if inTitle {
				title.WriteString(text)
				continue
			}
			if trimmed := strings.TrimRight(text, " \t\r\n"); strings.TrimSpace(trimmed) != "" {
				// The lines the text starts and ends on, past the newlines
				// around it.
				lead := len(trimmed) - len(strings.TrimLeft(trimmed, " \t\r\n"))
				if paraLine == 0 {
					paraLine = start + strings.Count(trimmed[:lead], "\n")
				}
				paraEnd = start + strings.Count(trimmed, "\n")
			}
			para.WriteString(text)
		}
	}
}
