package embedding

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Tokenizer splits text into the WordPiece ids of a BERT vocabulary, as the
// Hugging Face tokenizers library does for a tokenizer.json with a
// BertNormalizer, a BertPreTokenizer and a WordPiece model.
type Tokenizer struct {
	vocab        vocab
	limit        int32 // ids from here on are unknown words; 0 for no limit
	unk          int32
	cls, sep     int32
	prefix       string // of word pieces that continue a word: "##"
	maxWordChars int

	lowercase, stripAccents, cjk, clean bool
}

// tokenizerFile is the part of a tokenizer.json the tokenizer reads.
type tokenizerFile struct {
	Normalizer *struct {
		Type         string `json:"type"`
		CleanText    *bool  `json:"clean_text"`
		HandleCJK    *bool  `json:"handle_chinese_chars"`
		StripAccents *bool  `json:"strip_accents"`
		Lowercase    *bool  `json:"lowercase"`
	} `json:"normalizer"`
	PreTokenizer *struct {
		Type string `json:"type"`
	} `json:"pre_tokenizer"`
	Model struct {
		Type         string   `json:"type"`
		UnkToken     string   `json:"unk_token"`
		Prefix       *string  `json:"continuing_subword_prefix"`
		MaxWordChars int      `json:"max_input_chars_per_word"`
		Vocab        rawVocab `json:"vocab"`
	} `json:"model"`
}

// rawVocab is the vocabulary's JSON, as a slice of the file's bytes:
// json.RawMessage would copy them.
type rawVocab []byte

func (r *rawVocab) UnmarshalJSON(data []byte) error {
	*r = data
	return nil
}

// ParseTokenizer reads a tokenizer.json. Only WordPiece vocabularies with
// BERT's normalisation are supported; other kinds are an error that says so.
func ParseTokenizer(data []byte) (*Tokenizer, error) {
	var f tokenizerFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("not a tokenizer.json: %v", err)
	}
	if f.Model.Type != "WordPiece" {
		kind := f.Model.Type
		if kind == "" {
			kind = "no model type"
		}
		return nil, fmt.Errorf("the tokenizer is %s; only WordPiece (BERT) tokenizers are supported", kind)
	}
	if f.PreTokenizer != nil && f.PreTokenizer.Type != "BertPreTokenizer" {
		return nil, fmt.Errorf("the pre-tokenizer is %s; only BertPreTokenizer is supported", f.PreTokenizer.Type)
	}
	tokens, ids, err := parseVocab(f.Model.Vocab)
	if err != nil {
		return nil, fmt.Errorf("model.vocab: %v", err)
	}
	vocab, err := buildVocab(tokens, ids)
	if err != nil {
		return nil, fmt.Errorf("model.vocab: %v", err)
	}
	t := &Tokenizer{
		vocab:        vocab,
		prefix:       "##",
		maxWordChars: 100,
		lowercase:    true,
		cjk:          true,
		clean:        true,
	}
	if f.Model.Prefix != nil {
		t.prefix = *f.Model.Prefix
	}
	if f.Model.MaxWordChars > 0 {
		t.maxWordChars = f.Model.MaxWordChars
	}
	if n := f.Normalizer; n != nil {
		if n.Type != "BertNormalizer" {
			return nil, fmt.Errorf("the normalizer is %s; only BertNormalizer is supported", n.Type)
		}
		t.clean = n.CleanText == nil || *n.CleanText
		t.cjk = n.HandleCJK == nil || *n.HandleCJK
		t.lowercase = n.Lowercase == nil || *n.Lowercase
	}
	// Accents go with lowercasing unless the file says otherwise.
	t.stripAccents = t.lowercase
	if n := f.Normalizer; n != nil && n.StripAccents != nil {
		t.stripAccents = *n.StripAccents
	}
	special := func(tok string) int32 {
		id, ok := t.vocab.lookup(tok)
		if !ok && err == nil {
			err = fmt.Errorf("the vocabulary has no %s token", tok)
		}
		return id
	}
	t.unk = special(f.Model.UnkToken)
	t.cls = special("[CLS]")
	t.sep = special("[SEP]")
	if err != nil {
		return nil, err
	}
	return t, nil
}

// fits checks that the ids of the vocabulary index n word vectors.
func (t *Tokenizer) fits(n int) error {
	if t.vocab.len() > n {
		return fmt.Errorf("the tokenizer has %d tokens but the model only %d word vectors", t.vocab.len(), n)
	}
	for _, id := range t.vocab.all() {
		if id < 0 || int(id) >= n {
			return fmt.Errorf("the tokenizer has id %d, outside the model's %d word vectors", id, n)
		}
	}
	return nil
}

// Encode returns the ids of text between [CLS] and [SEP], at most max of
// them in all: longer text is cut, as sentence-transformers cuts it.
func (t *Tokenizer) Encode(text string, max int) []int32 {
	ids := []int32{t.cls}
	limit := max - 1
	for _, word := range t.words(text) {
		ids = t.appendPieces(ids, word)
		if len(ids) >= limit {
			ids = ids[:limit]
			break
		}
	}
	return append(ids, t.sep)
}

// words normalises text and splits it into words and punctuation.
func (t *Tokenizer) words(text string) []string {
	var b strings.Builder
	b.Grow(len(text) + 8)
	for _, r := range strings.ToValidUTF8(text, "\uFFFD") {
		switch {
		case t.clean && (r == 0 || r == utf8.RuneError || isControl(r)):
			continue
		case t.clean && isWhitespace(r):
			b.WriteByte(' ')
		case t.cjk && isCJK(r):
			b.WriteByte(' ')
			b.WriteRune(r)
			b.WriteByte(' ')
		default:
			b.WriteRune(r)
		}
	}
	s := b.String()
	if t.stripAccents {
		s = stripAccents(s)
	}
	if t.lowercase {
		s = strings.Map(unicode.ToLower, s)
	}
	var words []string
	start := -1
	for i, r := range s {
		switch {
		case isWhitespace(r):
			if start >= 0 {
				words = append(words, s[start:i])
				start = -1
			}
		case isPunct(r):
			if start >= 0 {
				words = append(words, s[start:i])
				start = -1
			}
			words = append(words, s[i:i+utf8.RuneLen(r)])
		default:
			if start < 0 {
				start = i
			}
		}
	}
	if start >= 0 {
		words = append(words, s[start:])
	}
	return words
}

// appendPieces appends the word pieces of word, longest first, or [UNK]
// when some part of it is in no piece.
func (t *Tokenizer) appendPieces(ids []int32, word string) []int32 {
	if utf8.RuneCountInString(word) > t.maxWordChars {
		return append(ids, t.unk)
	}
	n := len(ids)
	for start := 0; start < len(word); {
		end := len(word)
		found := false
		for end > start {
			piece := word[start:end]
			if start > 0 {
				piece = t.prefix + piece
			}
			if id, ok := t.vocab.lookup(piece); ok && (t.limit == 0 || id < t.limit) {
				ids = append(ids, id)
				found = true
				break
			}
			_, size := utf8.DecodeLastRuneInString(word[start:end])
			end -= size
		}
		if !found {
			return append(ids[:n], t.unk)
		}
		start = end
	}
	return ids
}

// stripAccents removes the combining marks of s after decomposing it.
func stripAccents(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return s
	}
	return strings.Map(func(r rune) rune {
		if unicode.Is(unicode.Mn, r) {
			return -1
		}
		return r
	}, norm.NFD.String(s))
}

// isWhitespace is Unicode's White_Space, as BERT counts it.
func isWhitespace(r rune) bool {
	return r == ' ' || r == '\t' || r == '\n' || r == '\r' || unicode.IsSpace(r)
}

// isControl is a character of the "other" categories that is not a tab or
// a line break: BERT drops them.
func isControl(r rune) bool {
	if r == '\t' || r == '\n' || r == '\r' {
		return false
	}
	if r < utf8.RuneSelf {
		return r < 0x20 || r == 0x7f
	}
	return unicode.In(r, unicode.Cc, unicode.Cf, unicode.Co, unicode.Cs) || !assigned(r)
}

// assigned reports whether r has a category other than Cn (unassigned).
func assigned(r rune) bool {
	return unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S, unicode.Z, unicode.C)
}

// isPunct is BERT's punctuation: every ASCII symbol, and Unicode's
// punctuation categories.
func isPunct(r rune) bool {
	if r < utf8.RuneSelf {
		return r >= 33 && r <= 47 || r >= 58 && r <= 64 || r >= 91 && r <= 96 || r >= 123 && r <= 126
	}
	return unicode.IsPunct(r)
}

// isCJK is a CJK ideograph, which BERT makes a word of its own.
func isCJK(r rune) bool {
	return r >= 0x4E00 && r <= 0x9FFF ||
		r >= 0x3400 && r <= 0x4DBF ||
		r >= 0x20000 && r <= 0x2A6DF ||
		r >= 0x2A700 && r <= 0x2B73F ||
		r >= 0x2B740 && r <= 0x2B81F ||
		r >= 0x2B920 && r <= 0x2CEAF ||
		r >= 0xF900 && r <= 0xFAFF ||
		r >= 0x2F800 && r <= 0x2FA1F
}

// parseVocab decodes a vocabulary, a JSON object of tokens and their ids,
// in the object's order. Thirty thousand entries took encoding/json 20 ms,
// more than the rest of a query's embedding; this reads them in about one.
func parseVocab(data []byte) (tokens []string, ids []int32, err error) {
	if len(data) == 0 || string(data) == "null" {
		return nil, nil, errors.New("missing")
	}
	n := bytes.Count(data, []byte{':'})
	tokens, ids = make([]string, 0, n), make([]int32, 0, n)
	all := string(data) // one copy, which the tokens share
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return nil, nil, errors.New("want an object of tokens and ids")
	}
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return tokens, ids, nil
	}
	for {
		if i >= len(data) || data[i] != '"' {
			return nil, nil, fmt.Errorf("offset %d: want a token in quotes", i)
		}
		end, escaped := i+1, false
		for end < len(data) && data[end] != '"' {
			if data[end] == '\\' {
				escaped = true
				end++
			}
			end++
		}
		if end >= len(data) {
			return nil, nil, errors.New("unterminated token")
		}
		var tok string
		if escaped {
			if err := json.Unmarshal(data[i:end+1], &tok); err != nil {
				return nil, nil, fmt.Errorf("offset %d: %v", i, err)
			}
		} else {
			tok = all[i+1 : end]
		}
		i = skipSpace(data, end+1)
		if i >= len(data) || data[i] != ':' {
			return nil, nil, fmt.Errorf("offset %d: want a colon after %q", i, tok)
		}
		i = skipSpace(data, i+1)
		start := i
		for i < len(data) && data[i] >= '0' && data[i] <= '9' {
			i++
		}
		id, err := strconv.ParseInt(string(data[start:i]), 10, 32)
		if err != nil {
			return nil, nil, fmt.Errorf("offset %d: the id of %q is not a whole number", start, tok)
		}
		tokens, ids = append(tokens, tok), append(ids, int32(id))
		i = skipSpace(data, i)
		if i < len(data) && data[i] == ',' {
			i = skipSpace(data, i+1)
			continue
		}
		if i < len(data) && data[i] == '}' {
			return tokens, ids, nil
		}
		return nil, nil, fmt.Errorf("offset %d: want a comma or the end of the object", i)
	}
}

func skipSpace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\n' || data[i] == '\r' || data[i] == '\t') {
		i++
	}
	return i
}
