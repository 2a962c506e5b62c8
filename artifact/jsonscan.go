package artifact

import (
	"bytes"
	"strconv"
	"unicode/utf8"
	"unsafe"
)

// The manifest's header has a reader of its own (header.go), built on
// jsonScanner: a scanner of the JSON Encode writes.

// jsonScanner reads JSON as json.Marshal writes it, declining the rest.
type jsonScanner struct {
	data []byte
	i    int
}

func (s *jsonScanner) space() {
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
func (s *jsonScanner) next(c byte) bool {
	if s.i < len(s.data) && s.data[s.i] == c {
		s.i++
		return true
	}
	return false
}

// str reads a string without escapes: valid UTF-8 without control
// characters, as the general decoder reads it unchanged.
func (s *jsonScanner) str() (string, bool) {
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
func (s *jsonScanner) strs() ([]string, bool) {
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
func (s *jsonScanner) uint(bits int) (uint64, bool) {
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

// int reads an integer that fits in an int.
func (s *jsonScanner) int() (int, bool) {
	neg := s.next('-')
	n, ok := s.uint(strconv.IntSize - 1)
	if neg {
		return -int(n), ok
	}
	return int(n), ok
}
