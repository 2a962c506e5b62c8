// Package visible makes text safe to print on a terminal: control
// characters in knowledge or in file names (ESC, BEL, backspace, the C1
// controls a terminal also obeys) are shown as escapes such as \x1b
// instead of reaching the terminal raw, where they could move the cursor,
// rewrite what was printed or retitle the window.
package visible

import (
	"strings"
	"unicode/utf8"
)

// Text escapes the control characters of s except tab and newline; a
// CRLF line ending becomes a newline, a carriage return elsewhere is
// escaped. Bytes that are not UTF-8 are escaped too: an 8-bit terminal
// reads 0x9b as a control sequence.
func Text(s string) string { return escape(s, false) }

// Line is Text that escapes tab and newline as well, for what must stay on
// one line: a path, a heading, a cell of a table.
func Line(s string) string { return escape(s, true) }

func escape(s string, line bool) string {
	i := unsafeAt(s, line, 0)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i >= 0 {
		b.WriteString(s[:i])
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			b.WriteString(`\x`)
			b.WriteString(hex2(s[i]))
		case r == '\r' && !line && strings.HasPrefix(s[i:], "\r\n"):
			// a CRLF line ending: the newline alone
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x80:
			b.WriteString(`\x`)
			b.WriteString(hex2(byte(r)))
		default: // C1
			b.WriteString(`\u00`)
			b.WriteString(hex2(byte(r)))
		}
		s = s[i+size:]
		i = unsafeAt(s, line, 0)
	}
	b.WriteString(s)
	return b.String()
}

// unsafeAt returns the offset of the first character of s from `from` that
// must be escaped, or -1.
func unsafeAt(s string, line bool, from int) int {
	for i := from; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 && (line || c != '\n' && c != '\t') || c == 0x7f {
				return i
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size <= 1 || r >= 0x80 && r <= 0x9f {
			return i
		}
		i += size
	}
	return -1
}

// Safe reports whether s prints as it is under Text.
func Safe(s string) bool { return unsafeAt(s, false, 0) < 0 }

func hex2(c byte) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[c>>4], digits[c&15]})
}
