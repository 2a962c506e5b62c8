package pgtsv

import (
	"encoding/binary"
	"math"
	"slices"
	"strings"

	"github.com/blevesearch/snowballstem"
	"github.com/blevesearch/snowballstem/english"
)

// The server's limits (tsearch/ts_type.h).
const (
	maxWordLen   = 1<<11 - 1 // longer tokens are left out
	maxStemLen   = 1000      // longer words are not stemmed
	maxStrPos    = 1<<20 - 1 // a tsvector's lexemes and positions, in bytes
	maxEntryPos  = 1 << 14   // positions stop at maxEntryPos-1
	maxPositions = 256       // a lexeme keeps fewer positions than this
)

// dictionary is what the english configuration does with a token type;
// configuration maps each type to its dictionary.
type dictionary uint8

const (
	none    dictionary = iota // not indexed, and takes no position
	stemmed                   // english_stem: stop words dropped, the rest stemmed
	simple                    // simple: lower-cased as it is
)

var configuration = [...]dictionary{
	tAsciiWord: stemmed, tWord: stemmed, tPartHWord: stemmed,
	tASCIIPartHWord: stemmed, tASCIIHWord: stemmed, tHWord: stemmed,
	tNumWord: simple, tEmail: simple, tURL: simple, tHost: simple,
	tScientific: simple, tVersion: simple, tNumPartHWord: simple,
	tNumHWord: simple, tURLPath: simple, tFilePath: simple,
	tDecimal: simple, tSignedInt: simple, tUnsignedInt: simple,
	tSpace: none, tTag: none, tProtocol: none, tXMLEntity: none,
}

// An Encoder computes tsvectors. It remembers the lexeme of each token it
// has seen, and numbers lexemes, so that a word costs one map look-up. It
// is not safe for concurrent use.
type Encoder struct {
	tokens  [2]map[string]int32 // of each token, by dictionary: its lexeme's number, -1 for none
	numbers map[string]int32    // of each lexeme: its number
	lexemes []string            // by number
	// The text being encoded: by lexeme number, its entry, valid where
	// textOf holds text.
	entryOf   []int32
	textOf    []uint32
	text      uint32
	entries   []entry
	positions []occurrence // the entries' positions, each a list
	order     []int32      // the entries, sorted
}

// entry is a lexeme of a text, with its positions.
type entry struct {
	lexeme      string
	first, last int32 // its positions' list in positions
	count       int32
}

// occurrence is a lexeme's position in a text, and the next one's index
// in positions.
type occurrence struct {
	pos  uint16
	next int32
}

// maxRemembered bounds what an Encoder remembers.
const maxRemembered = 1 << 17

// NewEncoder returns an Encoder.
func NewEncoder() *Encoder {
	e := &Encoder{}
	e.forget()
	return e
}

func (e *Encoder) forget() {
	e.text = 0
	e.tokens = [2]map[string]int32{{}, {}}
	e.numbers = map[string]int32{}
	e.lexemes, e.entryOf, e.textOf = e.lexemes[:0], e.entryOf[:0], e.textOf[:0]
}

// English returns to_tsvector('english', text) in tsvectorsend's binary
// form, and true; or false where text is not ASCII (or holds NUL), or its
// tsvector would be over the server's limits, and the server must say.
func (e *Encoder) English(text string) ([]byte, bool) {
	for i := 0; i < len(text); i++ {
		if c := text[i]; c == 0 || c >= 0x80 {
			return nil, false
		}
	}
	if len(e.lexemes) > maxRemembered || e.text == math.MaxUint32 {
		e.forget()
	}
	e.text++
	e.entries, e.positions = e.entries[:0], e.positions[:0]
	p := newParser(text)
	pos := 0
	for p.next() {
		dict := configuration[p.typ]
		if p.lenToken >= maxWordLen || dict == none {
			continue
		}
		// Every token a dictionary looks at takes a position, stop
		// words too.
		pos++
		if n := e.number(p.s[p.token:p.token+p.lenToken], dict); n >= 0 {
			e.add(n, uint16(min(pos, maxEntryPos-1)))
		}
	}
	return e.encode()
}

// number returns the number of the lexeme dict makes of token, or -1 for
// none (a stop word).
func (e *Encoder) number(token string, dict dictionary) int32 {
	tokens := e.tokens[dict-stemmed]
	if n, ok := tokens[token]; ok {
		return n
	}
	lexeme := strings.ToLower(token) // ASCII
	if dict == stemmed && len(token) <= maxStemLen {
		lexeme = stem(lexeme)
	}
	n := int32(-1)
	if lexeme != "" {
		var ok bool
		if n, ok = e.numbers[lexeme]; !ok {
			n = int32(len(e.lexemes))
			lexeme = strings.Clone(lexeme)
			e.numbers[lexeme] = n
			e.lexemes = append(e.lexemes, lexeme)
			e.entryOf = append(e.entryOf, 0)
			e.textOf = append(e.textOf, 0)
		}
	}
	tokens[strings.Clone(token)] = n
	return n
}

// stem is the english dictionary's lexeme of a lower-cased word: "" for a
// stop word.
func stem(word string) string {
	if word == "" || stopWords[word] {
		return ""
	}
	env := snowballstem.NewEnv(word)
	english.Stem(env)
	if s := env.Current(); s != "" {
		return s
	}
	return word
}

// add notes lexeme n at pos, as make_tsvector merges positions: ascending,
// each once, fewer than maxPositions, none after maxEntryPos-1.
func (e *Encoder) add(n int32, pos uint16) {
	at := int32(len(e.positions))
	if e.textOf[n] != e.text {
		e.textOf[n], e.entryOf[n] = e.text, int32(len(e.entries))
		e.entries = append(e.entries, entry{lexeme: e.lexemes[n], first: at, last: at, count: 1})
		e.positions = append(e.positions, occurrence{pos, -1})
		return
	}
	en := &e.entries[e.entryOf[n]]
	last := e.positions[en.last].pos
	if en.count < maxPositions-1 && last != maxEntryPos-1 && last != pos {
		e.positions[en.last].next = at
		e.positions = append(e.positions, occurrence{pos, -1})
		en.last = at
		en.count++
	}
}

// encode writes the text's lexemes, sorted, as tsvectorsend does.
func (e *Encoder) encode() ([]byte, bool) {
	e.order = e.order[:0]
	size, out := 0, 4
	for i, en := range e.entries {
		e.order = append(e.order, int32(i))
		size += len(en.lexeme)
		size += size & 1 // positions are 2-byte aligned
		size += 2 + 2*int(en.count)
		out += len(en.lexeme) + 1 + 2 + 2*int(en.count)
	}
	if size > maxStrPos {
		return nil, false
	}
	slices.SortFunc(e.order, func(a, b int32) int { return strings.Compare(e.entries[a].lexeme, e.entries[b].lexeme) })
	b := make([]byte, 0, out)
	b = binary.BigEndian.AppendUint32(b, uint32(len(e.entries)))
	for _, i := range e.order {
		en := &e.entries[i]
		b = append(b, en.lexeme...)
		b = append(b, 0)
		b = binary.BigEndian.AppendUint16(b, uint16(en.count))
		for at := en.first; at >= 0; at = e.positions[at].next {
			b = binary.BigEndian.AppendUint16(b, e.positions[at].pos) // weight D, which is 0
		}
	}
	return b, true
}

// stopWords are the english dictionary's stop words (english.stop).
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`i me my myself we our ours ourselves you
		your yours yourself yourselves he him his himself she her hers herself
		it its itself they them their theirs themselves what which who whom
		this that these those am is are was were be been being have has had
		having do does did doing a an the and but if or because as until while
		of at by for with about against between into through during before
		after above below to from up down in out on off over under again
		further then once here there when where why how all any both each few
		more most other some such no nor not only own same so than too very s
		t can will just don should now`) {
		m[w] = true
	}
	return m
}()

// Probe is a text with a token of each type the english configuration
// indexes, stop words, and the upper-case letters whose folding depends on
// the server's locale: a server whose to_tsvector('english', Probe) is not
// English's computes otherwise.
const Probe = `I AM the Quick-Brown fox's running e-mail, ISN'T IT? foo-1bar 1foo-bar-baz ` +
	`x86_64 Get-ChildItem john.doe@example.com http://www.example.com:8080/path?q=1&x=2 ` +
	`www.example.com /usr/local/bin ./rel ../up ~/home file.txt 42 -7 +3 1.5 -2.25 ` +
	`1e10 -4.5e+6 1.2.3 <b class="x">tag</b> <script>hidden</script> &amp; &#123; ` +
	`GENEROUSLY generation news skies dying added ABCDEFGHIJKLMNOPQRSTUVWXYZ`
