package visible

import (
	"testing"
	"unicode/utf8"
)

func TestText(t *testing.T) {
	for _, tc := range []struct{ in, text, line string }{
		{"plain words", "plain words", "plain words"},
		{"héllo wörld ✓", "héllo wörld ✓", "héllo wörld ✓"},
		{"a\tb\nc", "a\tb\nc", `a\tb\nc`},
		{"red \x1b[31mtext\x1b[0m", `red \x1b[31mtext\x1b[0m`, `red \x1b[31mtext\x1b[0m`},
		{"bell\a back\b del\x7f nul\x00", `bell\x07 back\x08 del\x7f nul\x00`, `bell\x07 back\x08 del\x7f nul\x00`},
		{"title \x1b]0;pwned\a", `title \x1b]0;pwned\x07`, `title \x1b]0;pwned\x07`},
		{"c1 \u009b2J", `c1 \u009b2J`, `c1 \u009b2J`},
		{"raw \x9b byte", `raw \x9b byte`, `raw \x9b byte`},
		{"crlf\r\nline", "crlf\nline", `crlf\r\nline`},
		{"over\rwrite", `over\rwrite`, `over\rwrite`},
	} {
		if got := Text(tc.in); got != tc.text {
			t.Errorf("Text(%q) = %q, want %q", tc.in, got, tc.text)
		}
		if got := Line(tc.in); got != tc.line {
			t.Errorf("Line(%q) = %q, want %q", tc.in, got, tc.line)
		}
	}
}

func FuzzText(f *testing.F) {
	f.Add("a\x1b[2Jb\u009b\xff\r\n")
	f.Fuzz(func(t *testing.T, s string) {
		for _, out := range []string{Text(s), Line(s)} {
			if !utf8.ValidString(out) {
				t.Fatalf("%q escapes to invalid UTF-8 %q", s, out)
			}
			for _, r := range out {
				if r < 0x20 && r != '\n' && r != '\t' || r >= 0x7f && r <= 0x9f {
					t.Fatalf("%q escapes to %q, which holds %U", s, out, r)
				}
			}
		}
		for _, r := range Line(s) {
			if r == '\n' || r == '\t' {
				t.Fatalf("Line(%q) holds a newline or tab", s)
			}
		}
		if Safe(s) != (Text(s) == s) {
			t.Fatalf("Safe(%q) = %v, but Text changes it to %q", s, Safe(s), Text(s))
		}
	})
}
