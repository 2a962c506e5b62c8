package artifact

import (
	"bytes"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// The manifest's header has one reader (header.go), built on jsonScanner.

// jsonScanner reads JSON: the values the manifest's header has, and any
// other value, skipped.
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

// str reads a string of valid UTF-8 without control characters. One
// without escapes, as Encode writes nearly every string, points into the
// data; escapes are decoded into a new one.
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
		if c == '\\' {
			return s.escaped(start)
		}
		if c < 0x20 {
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

// escaped reads the rest of a string holding escapes, from start (after
// its opening quote).
func (s *jsonScanner) escaped(start int) (string, bool) {
	var out []byte
	i := start
	for i < len(s.data) {
		c := s.data[i]
		switch {
		case c == '"':
			if !utf8.Valid(out) {
				return "", false
			}
			s.i = i + 1
			return string(out), true
		case c < 0x20:
			return "", false
		case c != '\\':
			out = append(out, c)
			i++
			continue
		}
		if i+1 >= len(s.data) {
			return "", false
		}
		i += 2
		switch e := s.data[i-1]; e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := s.hex4(i)
			if !ok {
				return "", false
			}
			i += 4
			if utf16.IsSurrogate(r) {
				// A pair makes one rune; a lone half is U+FFFD, as
				// encoding/json reads it.
				if lo, ok := s.hex4(i + 2); ok && i+1 < len(s.data) && s.data[i] == '\\' && s.data[i+1] == 'u' {
					if dec := utf16.DecodeRune(r, lo); dec != utf8.RuneError {
						r = dec
						i += 6
					} else {
						r = utf8.RuneError
					}
				} else {
					r = utf8.RuneError
				}
			}
			out = utf8.AppendRune(out, r)
		default:
			return "", false
		}
	}
	return "", false
}

// hex4 reads the four hex digits of a \u escape at i.
func (s *jsonScanner) hex4(i int) (rune, bool) {
	if i+4 > len(s.data) {
		return 0, false
	}
	n, err := strconv.ParseUint(unsafe.String(&s.data[i], 4), 16, 32)
	return rune(n), err == nil
}

// skip reads any one value and drops it: a key the header does not know,
// written by another version of kbc.
func (s *jsonScanner) skip(depth int) bool {
	if depth > 64 {
		return false
	}
	s.space()
	if s.i >= len(s.data) {
		return false
	}
	switch c := s.data[s.i]; {
	case c == '{':
		return s.object(func(string) bool { return s.skip(depth + 1) })
	case c == '[':
		s.i++
		if s.tok(']') {
			return true
		}
		for {
			if !s.skip(depth + 1) {
				return false
			}
			if s.tok(']') {
				return true
			}
			if !s.tok(',') {
				return false
			}
		}
	case c == '"':
		_, ok := s.str()
		return ok
	case c == 't':
		return s.word("true")
	case c == 'f':
		return s.word("false")
	case c == 'n':
		return s.null()
	default:
		return s.number()
	}
}

// number reads a JSON number.
func (s *jsonScanner) number() bool {
	start := s.i
	s.next('-')
	digits := func() int {
		from := s.i
		for s.i < len(s.data) && s.data[s.i] >= '0' && s.data[s.i] <= '9' {
			s.i++
		}
		return s.i - from
	}
	first := s.i
	if n := digits(); n == 0 || n > 1 && s.data[first] == '0' {
		return false
	}
	if s.next('.') && digits() == 0 {
		return false
	}
	if s.next('e') || s.next('E') {
		if !s.next('+') {
			s.next('-')
		}
		if digits() == 0 {
			return false
		}
	}
	return s.i > start
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

// float reads a number as a float64.
func (s *jsonScanner) float() (float64, bool) {
	start := s.i
	if !s.number() {
		return 0, false
	}
	f, err := strconv.ParseFloat(unsafe.String(&s.data[start], s.i-start), 64)
	return f, err == nil
}
