package query

import (
	"strings"
	"unicode/utf8"

	"github.com/kbqdev/kbq/artifact"
)

// snippetBytes is about how long a snippet is.
const snippetBytes = 240

// snippet returns the part of content with the most distinct query words,
// on one line, and the byte ranges of the matching words in it.
func snippet(content string, pl *plan, an *artifact.Analyzer) (string, [][2]int) {
	text := []byte(content)
	type match struct {
		start, end int
		term       string
	}
	// A term begins with its word's first letter, lowercased: the stemmers
	// change endings only. A word whose first byte, an ASCII letter or
	// digit, begins no term or prefix sought is passed over unanalyzed: a
	// fresh process spent a third of its search stemming its results'
	// words.
	var initials [utf8.RuneSelf]bool
	every := false // a term or prefix of no bytes: look at every word
	for t := range pl.terms {
		every = every || t == ""
		if t != "" && t[0] < utf8.RuneSelf {
			initials[t[0]] = true
		}
	}
	for _, p := range pl.prefixes {
		every = every || p == ""
		if p != "" && p[0] < utf8.RuneSelf {
			initials[p[0]] = true
		}
	}
	var matches []match
	artifact.Words(text, func(start, end int) {
		if c := lowerASCII(text[start]); !every && c < utf8.RuneSelf && !initials[c] {
			return
		}
		word := text[start:end]
		term := an.Term(word)
		ok := term != nil && pl.terms[string(term)]
		if !ok && len(pl.prefixes) > 0 {
			lw := strings.ToLower(string(word))
			for _, p := range pl.prefixes {
				if strings.HasPrefix(lw, p) {
					ok = true
					break
				}
			}
		}
		if ok {
			matches = append(matches, match{start, end, strings.ToLower(string(word))})
		}
	})
	// The window starting at the match that sees the most distinct words.
	from := 0
	best := 0
	for i, m := range matches {
		seen := map[string]bool{}
		for _, n := range matches[i:] {
			if n.end-m.start > snippetBytes {
				break
			}
			seen[n.term] = true
		}
		if len(seen) > best {
			best, from = len(seen), m.start
		}
	}
	start := max(0, from-snippetBytes/5)
	if start > 0 {
		// begin at a word boundary
		if sp := strings.IndexAny(content[start:from], " \n\t"); sp >= 0 {
			start += sp + 1
		} else {
			start = from
		}
	}
	end := min(len(content), start+snippetBytes)
	if end < len(content) {
		if sp := strings.LastIndexAny(content[start:end], " \n\t"); sp > 0 {
			end = start + sp
		}
	}
	for start < end && !utf8.RuneStart(content[start]) {
		start++
	}
	for end < len(content) && end > start && !utf8.RuneStart(content[end]) {
		end--
	}
	// One line, runs of white space collapsed, match ranges carried over.
	var b strings.Builder
	pos := make([]int, end-start+1)
	space := true
	if start > 0 {
		b.WriteString("… ")
	}
	for i := start; i < end; i++ {
		pos[i-start] = b.Len()
		c := content[i]
		if c == ' ' || c == '\n' || c == '\t' || c == '\r' {
			if !space {
				b.WriteByte(' ')
				space = true
			}
			continue
		}
		b.WriteByte(c)
		space = false
	}
	pos[end-start] = b.Len()
	out := strings.TrimRight(b.String(), " ")
	var hl [][2]int
	for _, m := range matches {
		if m.start >= start && m.end <= end {
			hl = append(hl, [2]int{pos[m.start-start], min(pos[m.end-start], len(out))})
		}
	}
	if end < len(content) {
		out += " …"
	}
	return out, hl
}

func lowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
