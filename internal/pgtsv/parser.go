package pgtsv

import "strings"

// The default parser is a state machine: each state has an ordered list of
// actions, the first whose test holds on the current character is taken,
// and an action may push the parser's position (to come back to it and try
// the state's next action), pop it, or emit a token. This file keeps the
// server's states, actions and their order, for ASCII text, where a
// character is one byte and the server's character classes are C's.

// A tokenType is a token's type, as ts_token_type('default') numbers it.
type tokenType uint8

const (
	tAsciiWord tokenType = 1 + iota
	tWord
	tNumWord
	tEmail
	tURL
	tHost
	tScientific
	tVersion
	tNumPartHWord
	tPartHWord
	tASCIIPartHWord
	tSpace
	tTag
	tProtocol
	tNumHWord
	tASCIIHWord
	tHWord
	tURLPath
	tFilePath
	tDecimal
	tSignedInt
	tUnsignedInt
	tXMLEntity
)

type state uint8

const (
	sBase state = iota
	sInNumWord
	sInAsciiWord
	sInWord
	sInUnsignedInt
	sInSignedIntFirst
	sInSignedInt
	sInSpace
	sInUDecimalFirst
	sInUDecimal
	sInDecimalFirst
	sInDecimal
	sInVerVersion
	sInSVerVersion
	sInVersionFirst
	sInVersion
	sInMantissaFirst
	sInMantissaSign
	sInMantissa
	sInXMLEntityFirst
	sInXMLEntity
	sInXMLEntityNumFirst
	sInXMLEntityNum
	sInXMLEntityHexNumFirst
	sInXMLEntityHexNum
	sInXMLEntityEnd
	sInTagFirst
	sInXMLBegin
	sInTagCloseFirst
	sInTagName
	sInTagBeginEnd
	sInTag
	sInTagEscapeK
	sInTagEscapeKK
	sInTagBackSlashed
	sInTagEnd
	sInCommentFirst
	sInCommentLast
	sInComment
	sInCloseCommentFirst
	sInCloseCommentLast
	sInCommentEnd
	sInHostFirstDomain
	sInHostDomainSecond
	sInHostDomain
	sInPortFirst
	sInPort
	sInHostFirstAN
	sInHost
	sInEmail
	sInFileFirst
	sInFileTwiddle
	sInPathFirst
	sInPathFirstFirst
	sInPathSecond
	sInFile
	sInFileNext
	sInURLPathFirst
	sInURLPathStart
	sInURLPath
	sInFURL
	sInProtocolFirst
	sInProtocolSecond
	sInProtocolEnd
	sInHyphenAsciiWordFirst
	sInHyphenAsciiWord
	sInHyphenWordFirst
	sInHyphenWord
	sInHyphenNumWordFirst
	sInHyphenNumWord
	sInHyphenDigitLookahead
	sInParseHyphen
	sInParseHyphenHyphen
	sInHyphenWordPart
	sInHyphenAsciiWordPart
	sInHyphenNumWordPart
	sInHyphenUnsignedInt
	sNull // no state: an action that keeps the state
)

// What an action does, besides moving on.
const (
	aNext     = 0
	aBingo    = 1 << iota // emit the token read so far
	aPop                  // go back to the position last pushed
	aPush                 // remember this position, and this action
	aRerun                // look at the same character again
	aClear                // forget the position last pushed
	aMerge                // go back to the position last pushed, keeping this one's place
	aClearAll             // forget every position pushed
)

type action struct {
	is      test
	c       byte // the character eq compares with
	flags   uint8
	to      state
	typ     tokenType
	special func(p *parser)
}

// position is where the parser is, and the state it is in.
type position struct {
	pos      int // of the current character
	charlen  int // 1, or 0 at the end
	lenToken int // the token's length so far
	state    state
	pushedAt int // the action that pushed this position, or -1
}

// A parser reads tokens from s. Its positions are a stack: the current
// one on top, below it those pushed to come back to.
type parser struct {
	s        string
	stack    []position
	st       *position // the top of stack
	ignore   bool      // inside <script> or <style>
	wanthost bool

	// The token last read.
	token    int
	lenToken int
	typ      tokenType
}

func newParser(s string) *parser {
	p := &parser{s: s, stack: make([]position, 1, 8)}
	p.stack[0] = position{state: sBase, pushedAt: -1}
	p.st = &p.stack[0]
	return p
}

// push puts a copy of the current position on top.
func (p *parser) push() {
	p.stack = append(p.stack, *p.st)
	p.st = &p.stack[len(p.stack)-1]
	p.st.pushedAt = -1
}

// pop goes back to the position below the top.
func (p *parser) pop() {
	p.stack = p.stack[:len(p.stack)-1]
	p.st = &p.stack[len(p.stack)-1]
}

// clear forgets the position below the top.
func (p *parser) clear() {
	n := len(p.stack)
	p.stack[n-2] = p.stack[n-1]
	p.stack = p.stack[:n-1]
	p.st = &p.stack[n-2]
}

// clearAll forgets every position below the top.
func (p *parser) clearAll() {
	p.stack[0] = p.stack[len(p.stack)-1]
	p.stack = p.stack[:1]
	p.st = &p.stack[0]
}

// merge goes back to the position below the top, keeping the top's place.
func (p *parser) merge() {
	top := *p.st
	p.pop()
	p.st.pos, p.st.charlen, p.st.lenToken = top.pos, top.charlen, top.lenToken
}

// A test is what an action asks of the current character. The text is
// ASCII, so a character is a byte, and the server's classes (isalpha and
// the like, or iswalpha in a UTF-8 database) are C's.
type test uint8

const (
	always     test = iota
	isEOF           // at the end
	eq              // the character is the action's c
	isAlpha         // a letter
	isAscLet        // an ASCII letter: for ASCII text, a letter
	isDigit         // a digit
	isAlnum         // a letter or a digit
	isNotAlnum      // neither
	isSpace         // white space
	isXDigit        // a hexadecimal digit
	isURLChar       // a character RFC 3986 allows in a URL
	isIgnore        // inside <script> or <style>
	isStopHost      // a host was wanted: now no longer
	isHost          // a host name follows, which is taken into the token
	isURLPath       // a URL's path follows, which is taken into the token
	// isSpecial holds for characters that join a word without being
	// letters: none in ASCII, where only NUL has no width, and NUL is
	// never in text.
	isSpecial
)

// The classes of each ASCII character.
const (
	cAlpha uint8 = 1 << iota
	cDigit
	cSpace
	cXDigit
	cURL
)

var classes = func() (c [128]uint8) {
	for b := range 128 {
		ch := byte(b)
		if ('a' <= ch && ch <= 'z') || ('A' <= ch && ch <= 'Z') {
			c[b] |= cAlpha
		}
		if '0' <= ch && ch <= '9' {
			c[b] |= cDigit | cXDigit
		}
		if ('a' <= ch && ch <= 'f') || ('A' <= ch && ch <= 'F') {
			c[b] |= cXDigit
		}
		switch ch {
		case ' ', '\t', '\n', '\v', '\f', '\r':
			c[b] |= cSpace
		}
		if ch > 0x20 && ch < 0x7f && !strings.ContainsRune(`"<>\\^`+"`"+`{|}`, rune(ch)) {
			c[b] |= cURL
		}
	}
	return c
}()

// holds reports whether t holds on the current character, whose classes
// are class (none at the end).
func (p *parser) holds(t test, c byte, class uint8) bool {
	switch t {
	case always:
		return true
	case isEOF:
		return p.st.charlen == 0
	case eq:
		return p.st.charlen == 1 && p.s[p.st.pos] == c
	case isAlpha, isAscLet:
		return class&cAlpha != 0
	case isDigit:
		return class&cDigit != 0
	case isAlnum:
		return class&(cAlpha|cDigit) != 0
	case isNotAlnum:
		return class&(cAlpha|cDigit) == 0
	case isSpace:
		return class&cSpace != 0
	case isXDigit:
		return class&cXDigit != 0
	case isURLChar:
		return class&cURL != 0
	case isIgnore:
		return p.ignore
	case isStopHost:
		if p.wanthost {
			p.wanthost = false
			return true
		}
		return false
	case isHost:
		return p.host()
	case isURLPath:
		return p.urlPath()
	}
	return false // isSpecial
}

// host reads a host name ahead with a parser of its own, and takes it
// into the current token.
func (p *parser) host() bool {
	sub := newParser(p.s[p.st.pos:])
	sub.wanthost = true
	if sub.next() && sub.typ == tHost {
		p.take(sub)
		return true
	}
	return false
}

// urlPath reads a URL's path ahead, and takes it into the current token.
func (p *parser) urlPath() bool {
	sub := newParser(p.s[p.st.pos:])
	sub.push()
	sub.st.state = sInURLPathFirst
	if sub.next() && sub.typ == tURLPath {
		p.take(sub)
		return true
	}
	return false
}

func (p *parser) take(sub *parser) {
	p.st.pos += sub.lenToken
	p.st.lenToken += sub.lenToken
	p.st.charlen = sub.st.charlen
}

// Special handlers, run when their action is taken.

// specialTags notes the start and end of <script> and <style>, whose
// contents are not words.
func specialTags(p *parser) {
	name := func(tag string) bool {
		end := p.token + len(tag)
		return end <= len(p.s) && equalFold(p.s[p.token:end], tag)
	}
	switch p.st.lenToken {
	case 8:
		if name("</script") {
			p.ignore = false
		}
	case 7:
		if name("</style") {
			p.ignore = false
		} else if name("<script") {
			p.ignore = true
		}
	case 6:
		if name("<style") {
			p.ignore = true
		}
	}
}

func specialFURL(p *parser) {
	p.wanthost = true
	p.st.pos -= p.st.lenToken
}

func specialHyphen(p *parser) {
	p.st.pos -= p.st.lenToken
}

func specialVerVersion(p *parser) {
	p.st.pos -= p.st.lenToken
	p.st.lenToken = 0
}

func equalFold(s, lower string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

// next reads the next token into p.token, p.lenToken and p.typ, and
// reports whether there was one.
func (p *parser) next() bool {
	if p.st.pos >= len(p.s) {
		return false
	}
	p.token = p.st.pos
	p.st.pushedAt = -1
	var item *action
	for p.st.pos <= len(p.s) {
		var class uint8
		if p.st.pos == len(p.s) {
			p.st.charlen = 0
		} else {
			p.st.charlen = 1
			class = classes[p.s[p.st.pos]]
		}
		ignore := b2i(p.ignore)
		if p.st.pushedAt < 0 && p.st.charlen == 1 {
			skips := &skip[p.st.state][ignore]
			n := p.st.pos
			for n < len(p.s) && skips[p.s[n]] {
				n++
			}
			if n > p.st.pos {
				p.st.lenToken += n - p.st.pos
				p.st.pos = n
				continue
			}
		}
		table := actions[p.st.state]
		i := 0
		if p.st.pushedAt >= 0 {
			// Back from a pop: try the action after the one that pushed.
			i = p.st.pushedAt + 1
			p.st.pushedAt = -1
			for !p.holds(table[i].is, table[i].c, class) {
				i++
			}
		} else {
			ch := 128
			if p.st.charlen == 1 {
				ch = int(p.s[p.st.pos])
			}
			if f := first[p.st.state][ignore][ch]; f != unknown {
				i = int(f)
			} else {
				for !p.holds(table[i].is, table[i].c, class) {
					i++
				}
			}
		}
		item = &table[i]
		if item.special != nil {
			item.special(p)
		}
		if item.flags&aBingo != 0 {
			p.lenToken = p.st.lenToken
			p.st.lenToken = 0
			p.typ = item.typ
		}
		switch {
		case item.flags&aPop != 0:
			p.pop()
		case item.flags&aPush != 0:
			p.st.pushedAt = i
			p.push()
		case item.flags&aClear != 0:
			p.clear()
		case item.flags&aClearAll != 0:
			p.clearAll()
		case item.flags&aMerge != 0:
			p.merge()
		}
		if item.to != sNull {
			p.st.state = item.to
		}
		if item.flags&aBingo != 0 || (p.st.pos >= len(p.s) && item.flags&aRerun == 0) {
			break
		}
		if item.flags&(aRerun|aPop) != 0 {
			continue
		}
		if p.st.charlen != 0 {
			p.st.pos += p.st.charlen
			p.st.lenToken += p.st.charlen
		}
	}
	return item != nil && item.flags&aBingo != 0
}
