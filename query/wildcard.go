package query

import (
	"strings"
	"unicode/utf8"
)

// Wildcards are matched by hand: the regexp package's initialisation ran
// in every kbq process for them, and a pattern of two operators needs no
// regular expressions.

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
