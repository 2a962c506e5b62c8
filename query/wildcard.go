package query

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Wildcards and the system-reminder guard of kbq context are matched by
// hand: the regexp package's initialisation ran in every kbq process for
// them, and a pattern of two operators needs no regular expressions.

// wildcardPrefix is the literal start of a wildcard pattern: what every
// term it matches begins with.
func wildcardPrefix(pattern string) string {
	if i := strings.IndexAny(pattern, "*?"); i >= 0 {
		return pattern[:i]
	}
	return pattern
}

// matchWildcard reports whether all of term matches pattern, where * is any
// run of characters and ? any one character.
func matchWildcard(pattern string, term []byte) bool {
	p, t := 0, 0
	star, resume := -1, 0 // the last * seen, and where its run would end next
	for t < len(term) {
		switch {
		case p < len(pattern) && pattern[p] == '*':
			star, resume = p, t
			p++
		case p < len(pattern) && pattern[p] == '?':
			_, size := utf8.DecodeRune(term[t:])
			p, t = p+1, t+size
		case p < len(pattern) && pattern[p] == term[t]:
			p, t = p+1, t+1
		case star >= 0:
			// Let the last * take one more character and try again.
			_, size := utf8.DecodeRune(term[resume:])
			resume += size
			p, t = star+1, resume
		default:
			return false
		}
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}

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
