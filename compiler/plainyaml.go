package compiler

import (
	"bytes"

	"go.yaml.in/yaml/v3"
)

// plainYAML parses the most common frontmatter into the document node
// yaml.Unmarshal makes of it, to the field (FuzzPlainYAMLMatchesYAML):
// parsing frontmatter with the YAML library took a twentieth of a build's
// CPU. What it takes is a mapping, one key a line, of plain scalars,
// lists of them in flow ("tags: [a, b]") or block style (a "- item" a
// line) and mappings of those, indented; every scalar printable ASCII on
// one line. It reports false, having done nothing, for anything else:
// comments, quotes, blank lines, tabs, carriage returns, a missing final
// line feed, long keys, empty values, scalars starting with an indicator
// or holding what would end them (": ", " #"), a line starting as a
// document's end does (...), and the rest of YAML.
func plainYAML(data []byte) (*yaml.Node, bool) {
	if len(data) == 0 || data[len(data)-1] != '\n' {
		return nil, false
	}
	p := frontmatterLines{data: data}
	mapping := p.mapping(0)
	if mapping == nil || p.off < len(data) {
		return nil, false
	}
	return &yaml.Node{Kind: yaml.DocumentNode, Line: 1, Column: 1, Content: []*yaml.Node{mapping}}, true
}

// frontmatterLines walks plain frontmatter a line at a time.
type frontmatterLines struct {
	data []byte
	off  int // where the current line starts
	n    int // the current line's number, from 0
}

func (p *frontmatterLines) line() []byte {
	return p.data[p.off : p.off+bytes.IndexByte(p.data[p.off:], '\n')]
}

func (p *frontmatterLines) next() {
	p.off += bytes.IndexByte(p.data[p.off:], '\n') + 1
	p.n++
}

// mapping reads the mapping whose keys start the lines from the current
// one that are indented by indent spaces; nil when one of them does not
// fit plainYAML.
func (p *frontmatterLines) mapping(indent int) *yaml.Node {
	m := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: p.n + 1, Column: indent + 1}
	for p.off < len(p.data) {
		line := p.line()
		if at := spaces(line); at != indent {
			if at > indent {
				return nil
			}
			break // the mapping ends
		}
		line = line[indent:]
		colon := bytes.IndexByte(line, ':')
		if colon <= 0 || colon > maxPlainKey || !plainScalar(line[:colon]) || bytes.HasPrefix(line, []byte("...")) {
			return nil
		}
		key := p.scalar(line[:colon], indent)
		p.next()
		var value *yaml.Node
		switch at := colon + 1 + spaces(line[colon+1:]); {
		case at == len(line): // a list or a mapping, on the lines after
			value = p.nested(indent)
		case at == colon+1: // "key:value" is a scalar of its own
			return nil
		case line[at] == '[':
			value = p.flow(line, at, indent)
		default:
			v := bytes.TrimRight(line[at:], " ")
			if plainScalar(v) {
				value = p.scalar(v, indent+at)
				value.Line-- // p moved on
			}
		}
		if value == nil {
			return nil
		}
		m.Content = append(m.Content, key, value)
	}
	return m
}

// nested reads the value of a key indented by indent that ends its line:
// a block list, or a mapping indented further.
func (p *frontmatterLines) nested(indent int) *yaml.Node {
	if p.off >= len(p.data) {
		return nil
	}
	line := p.line()
	at := spaces(line)
	switch {
	case at+1 < len(line) && line[at] == '-' && line[at+1] == ' ':
		if at < indent {
			return nil
		}
		return p.block()
	case at > indent:
		return p.mapping(at)
	}
	return nil
}

// scalar returns the plain scalar s, at byte col of the current line.
func (p *frontmatterLines) scalar(s []byte, col int) *yaml.Node {
	n := &yaml.Node{Kind: yaml.ScalarNode, Value: string(s), Line: p.n + 1, Column: col + 1}
	n.Tag = n.ShortTag() // as the parser resolves a plain scalar
	return n
}

// block reads a block list, its items one a line from the current one,
// each "- item" at the same indentation; nil when there is none or an
// item is not a plain scalar.
func (p *frontmatterLines) block() *yaml.Node {
	var seq *yaml.Node
	indent := -1
	for p.off < len(p.data) {
		line := p.line()
		at := spaces(line)
		if at+1 >= len(line) || line[at] != '-' || line[at+1] != ' ' {
			break
		}
		if indent >= 0 && at != indent {
			return nil
		}
		item := at + 2 + spaces(line[at+2:])
		v := bytes.TrimRight(line[item:], " ")
		if !plainScalar(v) {
			return nil
		}
		if seq == nil {
			indent = at
			seq = &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Line: p.n + 1, Column: at + 1}
		}
		seq.Content = append(seq.Content, p.scalar(v, item))
		p.next()
	}
	return seq
}

// flow reads the flow list "[a, b]" at byte at of line, the line before
// the current one without its indent spaces, ending it; nil when it does
// not fit.
func (p *frontmatterLines) flow(line []byte, at, indent int) *yaml.Node {
	end := bytes.IndexByte(line, ']')
	if end < 0 || len(bytes.TrimRight(line[end+1:], " ")) > 0 {
		return nil
	}
	seq := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle, Tag: "!!seq", Line: p.n, Column: indent + at + 1}
	inner := line[at+1 : end]
	if len(bytes.TrimRight(inner, " ")) == 0 {
		return seq
	}
	for pos := at + 1; ; {
		pos += spaces(line[pos:end])
		comma := bytes.IndexByte(line[pos:end], ',')
		stop := end
		if comma >= 0 {
			stop = pos + comma
		}
		v := bytes.TrimRight(line[pos:stop], " ")
		if !plainScalar(v) || bytes.ContainsAny(v, "[]{}:#") {
			return nil
		}
		item := p.scalar(v, indent+pos)
		item.Line-- // the list's line
		seq.Content = append(seq.Content, item)
		if comma < 0 {
			return seq
		}
		pos = stop + 1
	}
}

// spaces counts the spaces b starts with.
func spaces(b []byte) int {
	n := 0
	for n < len(b) && b[n] == ' ' {
		n++
	}
	return n
}

// maxPlainKey bounds the keys plainYAML takes: YAML allows a key without
// a "? " before it only within 1,024 characters of its ':'.
const maxPlainKey = 128

// plainScalar reports whether s is a plain scalar that fits plainYAML: it
// starts with none of YAML's indicators or a space, ends with no space,
// holds printable ASCII only, and neither ": " nor " #" nor a final ':',
// which would end it.
func plainScalar(s []byte) bool {
	if len(s) == 0 || s[len(s)-1] == ' ' || s[len(s)-1] == ':' {
		return false
	}
	switch s[0] {
	case ' ', '-', '?', ':', ',', '[', ']', '{', '}', '#', '&', '*', '!', '|', '>', '\'', '"', '%', '@', '`':
		return false
	}
	for i, c := range s {
		if c < 0x20 || c > 0x7e {
			return false
		}
		if c == ' ' && i+1 < len(s) && s[i+1] == '#' || c == ':' && i+1 < len(s) && s[i+1] == ' ' {
			return false
		}
	}
	return true
}
