package usage

import (
	"strconv"
	"unicode/utf8"
)

// Every kbq search appends a record, and in a fresh process encoding/json
// spends most of a millisecond building its encoder for the record type:
// longer than the search. appendJSON writes what encoding/json writes for
// a record, HTML characters unescaped, without reflection.

// appendJSON appends r as one line of JSON.
func (r *record) appendJSON(b []byte) []byte {
	b = append(b, `{"t":`...)
	b = strconv.AppendInt(b, r.T, 10)
	if r.Via != "" {
		b = appendField(b, "via", r.Via)
	}
	if r.Op != "" {
		b = appendField(b, "op", r.Op)
	}
	b = appendField(b, "path", r.Path)
	if r.Blob != "" {
		b = appendField(b, "blob", r.Blob)
	}
	if r.Query != "" {
		b = appendField(b, "q", r.Query)
	}
	if r.N != 0 {
		b = append(b, `,"n":`...)
		b = strconv.AppendInt(b, int64(r.N), 10)
	}
	if len(r.Days) > 0 {
		b = append(b, `,"days":[`...)
		for i, d := range r.Days {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, '[')
			b = strconv.AppendInt(b, d[0], 10)
			b = append(b, ',')
			b = strconv.AppendInt(b, d[1], 10)
			b = append(b, ']')
		}
		b = append(b, ']')
	}
	return append(b, "}\n"...)
}

func appendField(b []byte, key, value string) []byte {
	b = append(b, ',', '"')
	b = append(b, key...)
	b = append(b, '"', ':')
	return appendString(b, value)
}

// appendString appends s as a JSON string, escaped as encoding/json
// escapes it with HTML escaping off: quotes, backslashes and control
// characters, U+2028 and U+2029, and invalid UTF-8 as U+FFFD.
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// parseLine reads a line as appendJSON writes it into r, which must be
// zero, and reports whether it could: a line in any other form (spaces,
// escapes, other keys, keys twice or in another order) is left to
// encoding/json, which gives every line parseLine reads the same record.
// Reading a log of a few thousand documents with encoding/json took 9 ms,
// which kbq context and kbq serve's /context spent on every call.
func parseLine(line []byte, r *record) bool {
	rest, ok := cutPrefix(line, `{"t":`)
	if !ok {
		return false
	}
	if r.T, rest, ok = parseInt(rest); !ok {
		return false
	}
	// The keys in appendJSON's order, each at most once.
	keys := [...]string{"via", "op", "path", "blob", "q", "n", "days"}
	next := 0
	for len(rest) > 0 && rest[0] == ',' {
		key, after, ok := parseRaw(rest[1:])
		if !ok || len(after) == 0 || after[0] != ':' {
			return false
		}
		rest = after[1:]
		for next < len(keys) && keys[next] != string(key) {
			next++
		}
		if next == len(keys) {
			return false
		}
		switch keys[next] {
		case "via":
			r.Via, rest, ok = parseString(rest)
		case "op":
			r.Op, rest, ok = parseString(rest)
		case "path":
			r.Path, rest, ok = parseString(rest)
		case "blob":
			r.Blob, rest, ok = parseString(rest)
		case "q":
			r.Query, rest, ok = parseString(rest)
		case "n":
			var n int64
			n, rest, ok = parseInt(rest)
			r.N = int(n)
			ok = ok && int64(r.N) == n
		case "days":
			r.Days, rest, ok = parseDays(rest)
		}
		if !ok {
			return false
		}
		next++
	}
	return string(rest) == "}"
}

func cutPrefix(b []byte, prefix string) ([]byte, bool) {
	if len(b) < len(prefix) || string(b[:len(prefix)]) != prefix {
		return b, false
	}
	return b[len(prefix):], true
}

// parseInt reads a decimal integer as appendJSON writes one: a minus or
// no sign, no leading zero, no exponent, and (to stay clear of overflow)
// at most 18 digits.
func parseInt(b []byte) (int64, []byte, bool) {
	i := 0
	if i < len(b) && b[i] == '-' {
		i++
	}
	start := i
	for i < len(b) && '0' <= b[i] && b[i] <= '9' {
		i++
	}
	if i == start || i-start > 1 && b[start] == '0' || i-start > 18 {
		return 0, b, false
	}
	v, err := strconv.ParseInt(string(b[:i]), 10, 64)
	return v, b[i:], err == nil
}

// parseString reads a JSON string with nothing to unescape: no
// backslash, no control character, and valid UTF-8.
func parseString(b []byte) (string, []byte, bool) {
	s, rest, ok := parseRaw(b)
	return string(s), rest, ok
}

// parseRaw is parseString without the string: the bytes between the quotes.
func parseRaw(b []byte) ([]byte, []byte, bool) {
	if len(b) == 0 || b[0] != '"' {
		return nil, b, false
	}
	ascii := true
	for i := 1; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			s := b[1:i]
			if !ascii && !utf8.Valid(s) {
				return nil, b, false
			}
			return s, b[i+1:], true
		case c == '\\' || c < 0x20:
			return nil, b, false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return nil, b, false
}

// parseDays reads [[DAY,COUNT],...], at least one pair.
func parseDays(b []byte) ([][2]int64, []byte, bool) {
	var days [][2]int64
	rest, ok := cutPrefix(b, "[")
	for ok {
		var d [2]int64
		if rest, ok = cutPrefix(rest, "["); !ok {
			return nil, b, false
		}
		if d[0], rest, ok = parseInt(rest); !ok {
			return nil, b, false
		}
		if rest, ok = cutPrefix(rest, ","); !ok {
			return nil, b, false
		}
		if d[1], rest, ok = parseInt(rest); !ok {
			return nil, b, false
		}
		if rest, ok = cutPrefix(rest, "]"); !ok {
			return nil, b, false
		}
		days = append(days, d)
		if after, end := cutPrefix(rest, "]"); end {
			return days, after, true
		}
		rest, ok = cutPrefix(rest, ",")
	}
	return nil, b, false
}
