package compiler

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/kbqdev/kbq/knowledge"
)

type problem struct {
	line, col int
	msg       string
}

func split(t testing.TB, text string, tagsLine bool) (frontmatter, *source, []problem) {
	t.Helper()
	src := newSource([]byte(text))
	var probs []problem
	fm := splitFrontmatter(src, tagsLine, func(line, col int, msg string) {
		probs = append(probs, problem{line, col, msg})
	})
	return fm, src, probs
}

func TestSplitFrontmatter(t *testing.T) {
	tests := []struct {
		name     string
		text     string
		tagsLine bool
		present  bool
		body     string
		keys     []string
		problem  string // substring of the only problem, if any
		line     int
	}{
		{name: "none", text: "# Title\nbody\n", body: "# Title\nbody\n"},
		{name: "simple", text: "---\ntitle: A\n---\nbody\n", present: true, body: "body\n", keys: []string{"title"}},
		{name: "empty block", text: "---\n---\nbody", present: true, body: "body"},
		{name: "bom", text: "\ufeff---\ntitle: A\n---\nbody", present: true, body: "body", keys: []string{"title"}},
		{name: "crlf", text: "---\r\ntitle: A\r\ntags: [x]\r\n---\r\nbody\r\n", present: true, body: "body\n", keys: []string{"title", "tags"}},
		{name: "no body", text: "---\nid: 1\n---", present: true, body: "", keys: []string{"id"}},
		{name: "fence with trailing space", text: "--- \ntitle: A\n---  \nbody", present: true, body: "body", keys: []string{"title"}},
		{name: "not a fence", text: "----\ntitle: A\n----\n", body: "----\ntitle: A\n----\n"},
		{name: "dashes later", text: "body\n---\ntitle: A\n---\n", body: "body\n---\ntitle: A\n---\n"},
		{name: "unclosed", text: "---\ntitle: A\nbody that is not yaml\n", present: true, body: "", problem: "never closed", line: 1},
		{name: "only opening", text: "---", present: true, body: "", problem: "never closed", line: 1},
		{name: "list", text: "---\n- a\n- b\n---\nbody", present: true, body: "body", problem: "not a list", line: 2},
		{name: "scalar", text: "---\nhello\n---\nbody", present: true, body: "body", problem: `not the string "hello"`, line: 2},
		{name: "bad yaml", text: "---\ntitle: A\ntags: [a, b\n---\nbody", present: true, body: "body", problem: "did not find expected ',' or ']'", line: 3},
		{name: "bad indentation", text: "---\ntitle: A\n  x: 1\n---\nbody", present: true, body: "body", problem: "mapping values are not allowed", line: 3},
		{name: "tab", text: "---\ntitle: A\n\tx: 1\n---\n", present: true, body: "", problem: "invalid YAML", line: 3},
		{name: "tags line", text: "tags: a, b ,c\n# Body\n", tagsLine: true, body: "# Body\n"},
		{name: "tags line not for memories", text: "tags: a\nbody", body: "tags: a\nbody"},
		{name: "yes stays text", text: "---\nflag: yes\n---\n", present: true, keys: []string{"flag"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fm, src, probs := split(t, tt.text, tt.tagsLine)
			if fm.present != tt.present {
				t.Errorf("present = %v, want %v", fm.present, tt.present)
			}
			if got := string(src.Data[fm.body:]); got != tt.body {
				t.Errorf("body = %q, want %q", got, tt.body)
			}
			var keys []string
			if fm.fields != nil {
				for i := 0; i < len(fm.fields.Content); i += 2 {
					keys = append(keys, fm.fields.Content[i].Value)
				}
			}
			if fmt.Sprint(keys) != fmt.Sprint(tt.keys) {
				t.Errorf("keys = %v, want %v", keys, tt.keys)
			}
			switch {
			case tt.problem == "" && len(probs) > 0:
				t.Errorf("unexpected problems %v", probs)
			case tt.problem != "" && len(probs) != 1:
				t.Errorf("problems = %v, want one with %q", probs, tt.problem)
			case tt.problem != "":
				if !strings.Contains(probs[0].msg, tt.problem) || probs[0].line != tt.line {
					t.Errorf("problem = %d: %s, want %d: ...%s...", probs[0].line, probs[0].msg, tt.line, tt.problem)
				}
			}
			if tt.tagsLine && fmt.Sprint(fm.tagsLine) != "[a b c]" {
				t.Errorf("tags line = %q", fm.tagsLine)
			}
		})
	}
}

func TestFrontmatterPositionsAreSourcePositions(t *testing.T) {
	fm, _, _ := split(t, "\ufeff---\r\nid: 1\r\ncreated:   2024-05-01\r\n---\r\n", false)
	v := fm.fields.Content[3]
	if v.Line != 3 || v.Column != 12 {
		t.Errorf("created value at %d:%d, want 3:12", v.Line, v.Column)
	}
}

func FuzzSplitFrontmatter(f *testing.F) {
	for _, seed := range []string{
		"---\ntitle: A\n---\nbody", "\ufeff---\r\nid: 1\r\n---\r\n", "---\n- a\n---", "---\n", "tags: a,b\nx",
		"---\nx: [1, 2\n---\n", "---\na: &x 1\nb: *x\n---\n", "---\n? complex\n: key\n---\n", "\x00\xff---",
	} {
		f.Add(seed, true)
	}
	f.Fuzz(func(t *testing.T, text string, tagsLine bool) {
		fm, src, probs := split(t, text, tagsLine)
		if fm.body < 0 || fm.body > len(src.Data) {
			t.Fatalf("body offset %d outside 0..%d", fm.body, len(src.Data))
		}
		lines := strings.Count(string(src.Data), "\n") + 1
		for _, p := range probs {
			if p.line < 1 || p.line > lines+1 || p.col < 1 || p.msg == "" {
				t.Fatalf("bad problem %+v for %d lines", p, lines)
			}
		}
		if fm.fields != nil {
			// Reading the metadata of every kind must not panic either.
			for _, kind := range knowledge.IndexedKinds() {
				readMeta(kind, fm, func(line, col int, _ Severity, msg string) {
					if line < 1 || col < 1 || !utf8.ValidString(msg) && utf8.ValidString(text) {
						t.Fatalf("bad diagnostic %d:%d %q", line, col, msg)
					}
				}, nil)
			}
		}
	})
}

// TestSourceLines: the line of each byte, with and without a final newline,
// CRLF line ends and a byte-order mark.
func TestSourceLines(t *testing.T) {
	for _, tc := range []struct {
		text  string
		lines []int
	}{
		{"", []int{0}},
		{"a", []int{0}},
		{"\n", []int{0}},
		{"a\n", []int{0}},
		{"a\nb", []int{0, 2}},
		{"a\n\nb\n", []int{0, 2, 3}},
		{"\xef\xbb\xbfab\r\ncd\r\n", []int{0, 3}},
	} {
		src := newSource([]byte(tc.text))
		if !slices.Equal(src.Lines, tc.lines) {
			t.Errorf("%q: line starts %v, want %v", tc.text, src.Lines, tc.lines)
		}
		for off := range src.Data {
			want := 1 + bytes.Count(src.Data[:off], []byte("\n"))
			if got := src.LineOf(off); got != want {
				t.Errorf("%q: byte %d on line %d, want %d", tc.text, off, got, want)
			}
		}
	}
}
