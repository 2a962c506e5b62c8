package artifact

import (
	"bytes"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"

	"encoding/json"
)

// A manifest holds a line per document, and an incremental build reads and
// writes every one of them, so documents have a codec of their own: it
// reads and writes exactly the JSON that json.Marshal gives for a Document,
// a few times faster than the reflective codec. Anything else in a document
// list (another layout, an unknown key, an escaped string) sends the reader
// back to the general JSON decoder, so a manifest written by hand or by
// another version still reads.

// appendDocument appends d as json.Marshal encodes it.
func appendDocument(b []byte, d *Document) []byte {
	b = append(b, `{"path":`...)
	b = appendString(b, d.Path)
	b = append(b, `,"scope":`...)
	b = appendString(b, d.Scope)
	b = append(b, `,"kind":`...)
	b = appendString(b, d.Kind)
	b = append(b, `,"topic":`...)
	b = appendString(b, d.Topic)
	b = append(b, `,"blob":`...)
	b = appendString(b, d.Blob)
	if d.ID != 0 {
		b = append(b, `,"id":`...)
		b = strconv.AppendInt(b, int64(d.ID), 10)
	}
	if d.Title != "" {
		b = append(b, `,"title":`...)
		b = appendString(b, d.Title)
	}
	if len(d.Tags) > 0 {
		b = append(b, `,"tags":`...)
		b = appendStrings(b, d.Tags)
	}
	if d.Source != "" {
		b = append(b, `,"source":`...)
		b = appendString(b, d.Source)
	}
	if len(d.ShadowedBy) > 0 {
		b = append(b, `,"shadowed_by":`...)
		b = appendStrings(b, d.ShadowedBy)
	}
	if d.Importance != nil {
		b = append(b, `,"importance":`...)
		b = strconv.AppendFloat(b, *d.Importance, 'g', -1, 64)
	}
	if d.Created != "" {
		b = append(b, `,"created":`...)
		b = appendString(b, d.Created)
	}
	if d.Expires != "" {
		b = append(b, `,"expires":`...)
		b = appendString(b, d.Expires)
	}
	if d.Status != "" {
		b = append(b, `,"status":`...)
		b = appendString(b, d.Status)
	}
	if len(d.Supersedes) > 0 {
		b = append(b, `,"supersedes":`...)
		b = appendStrings(b, d.Supersedes)
	}
	if d.Commit != "" {
		b = append(b, `,"commit":`...)
		b = appendString(b, d.Commit)
	}
	if d.Author != "" {
		b = append(b, `,"author":`...)
		b = appendString(b, d.Author)
	}
	if d.Updated != "" {
		b = append(b, `,"updated":`...)
		b = appendString(b, d.Updated)
	}
	if d.Uncommitted {
		b = append(b, `,"uncommitted":true`...)
	}
	b = append(b, `,"chunks":`...)
	b = strconv.AppendInt(b, int64(d.Chunks), 10)
	b = append(b, `,"fields":`...)
	b = d.Fields.appendJSON(b)
	b = append(b, `,"seg":`...)
	b = strconv.AppendUint(b, d.Seg, 10)
	b = append(b, `,"doc":`...)
	b = strconv.AppendUint(b, uint64(d.Doc), 10)
	return append(b, '}')
}

func appendStrings(b []byte, ss []string) []byte {
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, s)
	}
	return append(b, ']')
}

// appendString appends s quoted. Strings that need no escaping, nearly all
// of them, are copied; the others are left to json.Marshal, whose escapes
// (HTML characters, U+2028, invalid UTF-8) the output must match.
func appendString(b []byte, s string) []byte {
	if plain(s) {
		b = append(b, '"')
		b = append(b, s...)
		return append(b, '"')
	}
	q, err := json.Marshal(s)
	if err != nil { // a string always marshals
		panic(err)
	}
	return append(b, q...)
}

// plain reports whether s is valid UTF-8 that JSON carries as it is: no
// control characters, quotes, backslashes, HTML characters or line and
// paragraph separators.
func plain(s string) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' || c == 0x7f {
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError || r == '\u2028' || r == '\u2029' {
			return false
		}
		i += size
	}
	return true
}

// decodeDocumentLines reads the document list as Encode writes it, from just
// after its opening bracket: one compact object per line, then the closing
// bracket. It returns the documents appended to docs and what follows the
// bracket, or docs emptied and false when the list is laid out any other
// way. Strings point into data.
func decodeDocumentLines(data []byte, docs []Document) ([]Document, []byte, bool) {
	s := docScanner{data: data}
	s.space()
	if s.next(']') {
		return docs, data[s.i:], true
	}
	for {
		var d Document
		if !s.document(&d) {
			return docs[:0], nil, false
		}
		docs = append(docs, d)
		s.space()
		if s.next(']') {
			return docs, data[s.i:], true
		}
		if !s.next(',') {
			return docs[:0], nil, false
		}
		s.space()
	}
}

// docScanner reads the JSON of one document as appendDocument writes it.
type docScanner struct {
	data []byte
	i    int
}

func (s *docScanner) space() {
	for s.i < len(s.data) {
		switch s.data[s.i] {
		case ' ', '\n', '\r', '\t':
			s.i++
		default:
			return
		}
	}
}

// next consumes c if it comes next.
func (s *docScanner) next(c byte) bool {
	if s.i < len(s.data) && s.data[s.i] == c {
		s.i++
		return true
	}
	return false
}

// literal reads lit, a JSON literal such as true.
func (s *docScanner) literal(lit string) bool {
	if !bytes.HasPrefix(s.data[s.i:], []byte(lit)) {
		return false
	}
	s.i += len(lit)
	return true
}

// str reads a string without escapes: valid UTF-8 without control
// characters, as the general decoder reads it unchanged.
func (s *docScanner) str() (string, bool) {
	if !s.next('"') {
		return "", false
	}
	start := s.i
	end := bytes.IndexByte(s.data[start:], '"')
	if end < 0 {
		return "", false
	}
	raw := s.data[start : start+end]
	ascii := true
	for _, c := range raw {
		if c < 0x20 || c == '\\' {
			return "", false
		}
		ascii = ascii && c < utf8.RuneSelf
	}
	if !ascii && !utf8.Valid(raw) {
		return "", false
	}
	s.i = start + end + 1
	if end == 0 {
		return "", true
	}
	return unsafe.String(&raw[0], len(raw)), true
}

// strs reads an array of strings, white space allowed between tokens; an
// empty array is empty, not nil, as the general decoder leaves it.
func (s *docScanner) strs() ([]string, bool) {
	if !s.tok('[') {
		return nil, false
	}
	out := []string{}
	if s.tok(']') {
		return out, true
	}
	for {
		s.space()
		v, ok := s.str()
		if !ok {
			return nil, false
		}
		out = append(out, v)
		if s.tok(']') {
			return out, true
		}
		if !s.tok(',') {
			return nil, false
		}
	}
}

// uint reads a non-negative integer that fits in bits.
func (s *docScanner) uint(bits int) (uint64, bool) {
	start := s.i
	for s.i < len(s.data) && s.data[s.i] >= '0' && s.data[s.i] <= '9' {
		s.i++
	}
	if s.i == start || s.i-start > 1 && s.data[start] == '0' {
		return 0, false
	}
	n, err := strconv.ParseUint(unsafe.String(&s.data[start], s.i-start), 10, bits)
	return n, err == nil
}

// float reads a number.
func (s *docScanner) float() (float64, bool) {
	start := s.i
	for s.i < len(s.data) && strings.IndexByte("0123456789.eE+-", s.data[s.i]) >= 0 {
		s.i++
	}
	if s.i == start {
		return 0, false
	}
	v, err := strconv.ParseFloat(unsafe.String(&s.data[start], s.i-start), 64)
	return v, err == nil
}

// int reads an integer that fits in an int.
func (s *docScanner) int() (int, bool) {
	neg := s.next('-')
	n, ok := s.uint(strconv.IntSize - 1)
	if neg {
		return -int(n), ok
	}
	return int(n), ok
}

func (s *docScanner) fields(f *DocFields) bool {
	*f = DocFields{}
	if !s.next('[') {
		return false
	}
	if s.next(']') {
		return true
	}
	for n := 0; ; n++ {
		if n == len(f) || !s.next('[') {
			return false
		}
		var ok1, ok2 bool
		f[n].Docs, ok1 = s.uint(64)
		if !ok1 || !s.next(',') {
			return false
		}
		f[n].Tokens, ok2 = s.uint(64)
		if !ok2 || !s.next(']') {
			return false
		}
		if s.next(']') {
			return true
		}
		if !s.next(',') {
			return false
		}
	}
}

// document reads one document object; keys may come in any order, but
// only the keys of Document, unspaced.
func (s *docScanner) document(d *Document) bool {
	if !s.next('{') {
		return false
	}
	if s.next('}') {
		return true
	}
	for {
		key, ok := s.str()
		if !ok || !s.next(':') {
			return false
		}
		var n uint64
		switch key {
		case "path":
			d.Path, ok = s.str()
		case "scope":
			d.Scope, ok = s.str()
		case "kind":
			d.Kind, ok = s.str()
		case "topic":
			d.Topic, ok = s.str()
		case "blob":
			d.Blob, ok = s.str()
		case "id":
			d.ID, ok = s.int()
		case "title":
			d.Title, ok = s.str()
		case "tags":
			d.Tags, ok = s.strs()
		case "source":
			d.Source, ok = s.str()
		case "shadowed_by":
			d.ShadowedBy, ok = s.strs()
		case "created":
			d.Created, ok = s.str()
		case "expires":
			d.Expires, ok = s.str()
		case "status":
			d.Status, ok = s.str()
		case "supersedes":
			d.Supersedes, ok = s.strs()
		case "commit":
			d.Commit, ok = s.str()
		case "author":
			d.Author, ok = s.str()
		case "updated":
			d.Updated, ok = s.str()
		case "uncommitted":
			d.Uncommitted, ok = s.literal("true"), true
			if !d.Uncommitted {
				ok = s.literal("false")
			}
		case "importance":
			var v float64
			v, ok = s.float()
			d.Importance = &v
		case "chunks":
			d.Chunks, ok = s.int()
		case "fields":
			ok = s.fields(&d.Fields)
		case "seg":
			d.Seg, ok = s.uint(64)
		case "doc":
			n, ok = s.uint(32)
			d.Doc = uint32(n)
		default:
			return false
		}
		if !ok {
			return false
		}
		if s.next('}') {
			return true
		}
		if !s.next(',') {
			return false
		}
	}
}
