package artifact

import (
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	porter "github.com/blevesearch/go-porterstemmer"
	"github.com/blevesearch/snowballstem"
	"github.com/blevesearch/snowballstem/english"
)

// Analysis names the text analysis chain an artifact was built with. The
// compiler records it in the manifest and the query side rebuilds the same
// chain from it, so that query terms are always analyzed like indexed terms.
type Analysis struct {
	// Stemmer is "porter2" (Snowball English), "porter" (Porter 1980, as
	// Lucene's PorterStemFilter) or "none".
	Stemmer string `json:"stemmer"`
	// Stopwords is "lucene" (the 33 words of Lucene's English analyzer),
	// "snowball" (the longer Snowball English list) or "none".
	Stopwords string `json:"stopwords"`
	// Fold is "diacritics" (letters with diacritics indexed as their base
	// letter, as SQLite FTS5's unicode61 does) or "" (artifacts built
	// before kbc folded them).
	Fold string `json:"fold,omitempty"`
}

// DefaultAnalysis is the chain new artifacts are built with. It was chosen by
// measuring retrieval quality; docs/benchmarks.md lists the alternatives.
var DefaultAnalysis = Analysis{Stemmer: "porter", Stopwords: "snowball", Fold: "diacritics"}

// Valid reports whether every name in a is known.
func (a Analysis) Valid() bool {
	switch a.Stemmer {
	case "porter2", "porter", "none":
	default:
		return false
	}
	_, ok := stopwordLists[a.Stopwords]
	return ok && (a.Fold == "" || a.Fold == "diacritics")
}

// maxTokenBytes drops longer tokens (base64 blobs, hashes, minified code):
// nobody searches for them and they bloat the term dictionary.
const maxTokenBytes = 64

// stemCacheLimit bounds the per-analyzer stem cache.
const stemCacheLimit = 1 << 17

// Analyzer turns text into index terms: words are runs of letters, digits and
// combining marks (an apostrophe between letters stays inside the word), each
// CJK ideograph or kana is a word of its own, then terms are lowercased,
// English possessives stripped, stop words dropped and the rest stemmed.
//
// Splitting at every other character, unlike Unicode word segmentation, makes
// identifiers searchable by their parts: node_modules, kbc.build and a->b
// all yield two terms.
//
// An Analyzer caches stems and is not safe for concurrent use; give each
// goroutine its own.
type Analyzer struct {
	fold  bool // diacritics
	stem  func(string) string
	stop  map[string]bool
	cache map[string][]byte
	buf   []byte
}

// NewAnalyzer returns an analyzer for a. Unknown names fall back to no
// stemming and no stop words; check a.Valid first.
func NewAnalyzer(a Analysis) *Analyzer {
	an := &Analyzer{cache: make(map[string][]byte), fold: a.Fold == "diacritics"}
	if list, ok := stopwordLists[a.Stopwords]; ok {
		an.stop = list()
	}
	switch a.Stemmer {
	case "porter2":
		an.stem = stemPorter2
	case "porter":
		an.stem = stemPorter
	}
	return an
}

func stemPorter2(s string) string {
	env := snowballstem.NewEnv(s)
	english.Stem(env)
	return env.Current()
}

func stemPorter(s string) string {
	return porter.StemString(s)
}

// Terms calls fn for every index term of text, with the byte range of the
// word it came from. The term slice is only valid during the call.
func (an *Analyzer) Terms(text []byte, fn func(term []byte, start, end int)) {
	Words(text, func(start, end int) {
		term := an.Term(text[start:end])
		if term != nil {
			fn(term, start, end)
		}
	})
}

// Term analyzes one word as produced by Words: it returns the index term, or
// nil when the word is a stop word or too long to index.
func (an *Analyzer) Term(word []byte) []byte {
	if len(word) > maxTokenBytes {
		return nil
	}
	an.buf = lowerFold(an.buf[:0], word, an.fold)
	w := stripPossessive(an.buf)
	if an.stem == nil {
		if an.stop[string(w)] {
			return nil
		}
		return w
	}
	// One lookup for most words: the cache also remembers stop words, as nil.
	if s, ok := an.cache[string(w)]; ok {
		return s
	}
	var s []byte
	if !an.stop[string(w)] {
		s = []byte(an.stem(string(w)))
	}
	if len(an.cache) >= stemCacheLimit {
		clear(an.cache)
	}
	an.cache[string(w)] = s
	return s
}

// lowerFold appends the lowercase form of word to dst, folding the typographic
// apostrophe to an ASCII one and, with diacritics, letters with diacritics
// to their base letter (café, cafe), as SQLite FTS5's unicode61 tokenizer
// does by default; combining marks are then dropped.
func lowerFold(dst, word []byte, diacritics bool) []byte {
	for i := 0; i < len(word); {
		c := word[i]
		if c < utf8.RuneSelf {
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			dst = append(dst, c)
			i++
			continue
		}
		r, n := utf8.DecodeRune(word[i:])
		i += n
		if r == '\u2019' {
			dst = append(dst, '\'')
			continue
		}
		r = unicode.ToLower(r)
		if diacritics {
			if unicode.Is(unicode.Mn, r) {
				continue
			}
			r = foldDiacritic(r)
		}
		dst = utf8.AppendRune(dst, r)
	}
	return dst
}

// foldDiacritic returns the base letter of a letter with diacritics: the
// first rune of its canonical decomposition when the rest are combining
// marks (é → e, ñ → n, ř → r). Other runes (ß, ø, CJK) are kept.
func foldDiacritic(r rune) rune {
	if r < 0xC0 || !unicode.IsLetter(r) {
		return r
	}
	var buf [utf8.UTFMax]byte
	d := norm.NFD.Bytes(buf[:utf8.EncodeRune(buf[:], r)])
	base, n := utf8.DecodeRune(d)
	if n == len(d) {
		return r // no decomposition
	}
	for rest := d[n:]; len(rest) > 0; {
		m, size := utf8.DecodeRune(rest)
		if !unicode.Is(unicode.Mn, m) {
			return r
		}
		rest = rest[size:]
	}
	return base
}

func stripPossessive(w []byte) []byte {
	if n := len(w); n > 2 && w[n-2] == '\'' && w[n-1] == 's' {
		return w[:n-2]
	}
	return w
}

// Words calls fn with the byte range of every word of text, in order.
func Words(text []byte, fn func(start, end int)) {
	start := -1
	for i := 0; i < len(text); {
		c := text[i]
		if c < utf8.RuneSelf {
			switch {
			case asciiWord[c]:
				if start < 0 {
					start = i
				}
				// The rest of an ASCII run of the word at once.
				for i++; i < len(text) && asciiWord[text[i]]; i++ {
				}
				continue
			case c == '\'' && start >= 0 && i+1 < len(text) && isLetterAt(text, i+1) && isLetterBefore(text, i):
				// don't, it's: the apostrophe stays inside the word
			default:
				if start >= 0 {
					fn(start, i)
					start = -1
				}
				// The rest of an ASCII run between words at once (an
				// apostrophe there is no word's).
				for i++; i < len(text) && text[i] < utf8.RuneSelf && !asciiWord[text[i]]; i++ {
				}
				continue
			}
			i++
			continue
		}
		var n int
		start, n = wordRune(text, i, start, fn)
		i += n
	}
	if start >= 0 {
		fn(start, len(text))
	}
}

// wordRune takes the character at text[i], not ASCII, for Words: it ends
// the word begun at start (-1: none) and begins one as the character
// says, and returns where the word now begins and the character's length.
func wordRune(text []byte, i, start int, fn func(start, end int)) (int, int) {
	r, n := utf8.DecodeRune(text[i:])
	switch {
	case isIdeograph(r):
		if start >= 0 {
			fn(start, i)
		}
		fn(i, i+n)
		return -1, n
	case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsNumber(r) || (start >= 0 && unicode.IsMark(r)):
		if start < 0 {
			start = i
		}
	case r == '\u2019' && start >= 0 && i+n < len(text) && isLetterAt(text, i+n) && isLetterBefore(text, i):
	default:
		if start >= 0 {
			fn(start, i)
		}
		return -1, n
	}
	return start, n
}

// asciiWord marks the ASCII bytes of words, letters and digits; no byte
// of a multi-byte character is one.
var asciiWord = func() (t [256]bool) {
	for c := range utf8.RuneSelf {
		t[c] = isASCIIWordByte(byte(c))
	}
	return t
}()

func isASCIIWordByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

func isLetterAt(text []byte, i int) bool {
	if c := text[i]; c < utf8.RuneSelf {
		return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
	}
	r, _ := utf8.DecodeRune(text[i:])
	return unicode.IsLetter(r) && !isIdeograph(r)
}

func isLetterBefore(text []byte, i int) bool {
	if i == 0 {
		return false
	}
	if c := text[i-1]; c < utf8.RuneSelf {
		return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
	}
	r, _ := utf8.DecodeLastRune(text[:i])
	return unicode.IsLetter(r) && !isIdeograph(r)
}

// isIdeograph reports runes of scripts written without spaces between words,
// which are indexed one character at a time.
func isIdeograph(r rune) bool {
	return unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) || unicode.Is(unicode.Katakana, r)
}
