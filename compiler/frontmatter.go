package compiler

import (
	"github.com/kbqdev/kbq/compiler/checks"

	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/kbqdev/kbq/internal/units"
	"go.yaml.in/yaml/v3"
)

// A source is a file's text and where each line of it starts.
type source = checks.Text

func newSource(data []byte) *source { return checks.NewText(data) }

// frontmatter is the YAML block at the start of a file.
type frontmatter struct {
	present bool
	// fields is the top-level mapping; nil when absent or not a mapping.
	fields *yaml.Node
	// firstLine is the source line of the first YAML line.
	firstLine int
	// body is the byte offset in the source where the markdown body starts.
	body int
	// tagsLine holds tags from a leading "tags: a,b" line (topics only).
	tagsLine []string
	// unclosed is set when the opening --- has no closing line.
	unclosed bool
}

// fence reports whether line (without its newline) is a frontmatter
// delimiter: exactly three dashes, optionally followed by spaces.
func fence(line []byte) bool {
	return bytes.Equal(bytes.TrimRight(line, " \t"), []byte("---"))
}

// splitFrontmatter finds the frontmatter of src and parses it. Problems are
// reported through report; the returned frontmatter is usable either way
// (fields is nil when the YAML is unusable).
// maxFrontmatter bounds a document's YAML frontmatter: metadata is short
// (the longest in the PowerShell and Hugo docs is 778 bytes), and a YAML
// tree takes some hundred times the memory of its text.
const maxFrontmatter = 64 << 10

// maxTags bounds the tags a document keeps; past it, a warning.
const maxTags = 100

// capTags keeps the first maxTags of tags, warning at line and col when
// there were more.
func capTags(tags []string, line, col int, r reporter) []string {
	if len(tags) <= maxTags {
		return tags
	}
	r(line, col, Warning, fmt.Sprintf("over %d tags, the most a document may have: the first %d are kept", maxTags, maxTags))
	return tags[:maxTags:maxTags]
}

func splitFrontmatter(src *source, allowTagsLine bool, report func(line, col int, msg string)) frontmatter {
	text := src.Data
	first, _, _ := bytes.Cut(text, []byte("\n"))
	if !fence(first) {
		if allowTagsLine {
			if tags, ok := parseTagsLine(first); ok {
				return frontmatter{body: min(len(first)+1, len(text)), tagsLine: tags}
			}
		}
		return frontmatter{}
	}
	fm := frontmatter{present: true, firstLine: 2}
	yamlStart := len(first) + 1
	for off := yamlStart; off < len(text); {
		end := bytes.IndexByte(text[off:], '\n')
		if end < 0 {
			end = len(text) - off
		}
		if fence(text[off : off+end]) {
			fm.body = min(off+end+1, len(text))
			if size := off - yamlStart; size > maxFrontmatter {
				report(fm.firstLine, 1, fmt.Sprintf("frontmatter is %s, over the %s it may hold: keep metadata short and move text into the body", units.Bytes(int64(size)), units.Bytes(maxFrontmatter)))
				return fm
			}
			fm.fields = parseYAML(text[yamlStart:off], fm.firstLine, report)
			return fm
		}
		off += end + 1
	}
	report(1, 1, "frontmatter is never closed: add a line with --- after the YAML block")
	fm.body, fm.unclosed = len(text), true
	return fm
}

var tagsLineRE = regexp.MustCompile(`^tags:[ \t]*([^\n]*)$`)

func parseTagsLine(line []byte) ([]string, bool) {
	m := tagsLineRE.FindSubmatch(line)
	if m == nil {
		return nil, false
	}
	return splitTags(string(m[1])), true
}

func splitTags(s string) []string {
	var tags []string
	for t := range strings.SplitSeq(s, ",") {
		if t = strings.TrimSpace(t); t != "" {
			tags = append(tags, t)
			if len(tags) > maxTags {
				break // capTags says so
			}
		}
	}
	return tags
}

// parseYAML parses the frontmatter YAML, whose first line is source line
// firstLine, and returns its top-level mapping with positions made relative
// to the source.
func parseYAML(data []byte, firstLine int, report func(line, col int, msg string)) *yaml.Node {
	doc, plain := plainYAML(data)
	if !plain {
		doc = new(yaml.Node)
		if err := yaml.Unmarshal(data, doc); err != nil {
			line, msg := yamlErrorLine(err)
			report(firstLine+line-1, 1, "invalid YAML in frontmatter: "+msg)
			return nil
		}
	}
	if len(doc.Content) == 0 {
		return &yaml.Node{Kind: yaml.MappingNode, Line: firstLine, Column: 1}
	}
	root := doc.Content[0]
	shiftLines(root, firstLine-1)
	if root.Kind != yaml.MappingNode {
		report(root.Line, root.Column, fmt.Sprintf("frontmatter must be a mapping of keys to values, not %s", describeNode(root)))
		return nil
	}
	return root
}

func shiftLines(n *yaml.Node, by int) {
	n.Line += by
	for _, c := range n.Content {
		shiftLines(c, by)
	}
}

// yamlParserProblems are the messages of go.yaml.in/yaml/v3's parser (as
// opposed to its scanner). For them the library prints a 0-based line.
var yamlParserProblems = []string{
	"did not find expected ',' or ']'", "did not find expected ',' or '}'",
	"did not find expected '-' indicator", "did not find expected <document start>",
	"did not find expected <stream-start>", "did not find expected key",
	"did not find expected node content", "found duplicate %TAG directive",
	"found duplicate %YAML directive", "found incompatible YAML document",
	"found undefined tag handle",
}

var yamlLineRE = regexp.MustCompile(`^yaml: (?:line (\d+): )?(.*)$`)

// yamlErrorLine extracts the 1-based line and message of a YAML error.
func yamlErrorLine(err error) (int, string) {
	m := yamlLineRE.FindStringSubmatch(strings.TrimSpace(err.Error()))
	if m == nil {
		return 1, err.Error()
	}
	msg := m[2]
	if m[1] == "" {
		return 1, msg
	}
	n, _ := strconv.Atoi(m[1])
	for _, p := range yamlParserProblems {
		if msg == p {
			n++
			break
		}
	}
	return max(n, 1), msg
}

func describeNode(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "a list"
	case yaml.MappingNode:
		return "a mapping"
	case yaml.AliasNode:
		return "an alias"
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!str":
			return fmt.Sprintf("the string %q", truncate(n.Value, 40))
		case "!!null":
			return "null"
		case "!!int":
			return "an integer"
		case "!!float":
			return "a number"
		case "!!bool":
			return "a boolean"
		case "!!timestamp":
			return "a timestamp"
		}
		return "a scalar"
	}
	return "nothing"
}

func truncate(s string, n int) string {
	if len([]rune(s)) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}
