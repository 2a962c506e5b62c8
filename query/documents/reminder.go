package documents

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// The system-reminder guard of kbq context is matched by hand, as
// wildcards are: the regexp package's initialisation ran in every kbq
// process for it.

// neutralizeReminders escapes system-reminder tags inside the knowledge, so
// that a document cannot close the wrapper and speak outside it: the < of
// every opening or closing tag, in any case and with spaces, becomes &lt;.
func neutralizeReminders(s string) string {
	var b strings.Builder
	done := 0
	for i := strings.IndexByte(s, '<'); i >= 0; {
		if reminderTag(s[i+1:]) {
			b.WriteString(s[done:i])
			b.WriteString("&lt;")
			done = i + 1
		}
		next := strings.IndexByte(s[i+1:], '<')
		if next < 0 {
			break
		}
		i += 1 + next
	}
	if done == 0 {
		return s
	}
	b.WriteString(s[done:])
	return b.String()
}

// reminderTag reports whether s, just after a <, goes on as a
// system-reminder tag: spaces, an optional /, spaces, then the name in any
// case (Unicode simple folding).
func reminderTag(s string) bool {
	s = strings.TrimLeft(s, " \t\n\f\r")
	s = strings.TrimPrefix(s, "/")
	s = strings.TrimLeft(s, " \t\n\f\r")
	for _, want := range "system-reminder" {
		r, size := utf8.DecodeRuneInString(s)
		if size == 0 || !sameFold(r, want) {
			return false
		}
		s = s[size:]
	}
	return true
}

// sameFold reports whether r is want under Unicode simple case folding.
func sameFold(r, want rune) bool {
	for f := want; ; {
		if f == r {
			return true
		}
		if f = unicode.SimpleFold(f); f == want {
			return false
		}
	}
}
