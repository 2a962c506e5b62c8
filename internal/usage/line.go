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
