package checks

import "bytes"

// A Text is a knowledge file normalized for parsing: the UTF-8 byte order
// mark removed and CRLF line endings turned into LF. Line and column
// numbers of diagnostics refer to it, which matches what editors show.
type Text struct {
	Data  []byte
	Lines []int // byte offset of the start of every line
}

// BOM is the UTF-8 byte order mark, which NewText removes.
var BOM = []byte("\xef\xbb\xbf")

// NewText normalizes data.
func NewText(data []byte) *Text {
	data = bytes.TrimPrefix(data, BOM)
	if bytes.Contains(data, []byte("\r\n")) {
		data = bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n"))
	}
	lines := make([]int, 1, 1+bytes.Count(data, []byte{'\n'}))
	for i := 0; ; {
		n := bytes.IndexByte(data[i:], '\n')
		if n < 0 || i+n+1 == len(data) {
			break
		}
		i += n + 1
		lines = append(lines, i)
	}
	return &Text{Data: data, Lines: lines}
}

// LineOf returns the 1-based line holding byte offset off.
func (t *Text) LineOf(off int) int {
	lo, hi := 0, len(t.Lines)
	for lo+1 < hi {
		mid := (lo + hi) / 2
		if t.Lines[mid] <= off {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo + 1
}

// Position returns the 1-based line and column (in characters) of byte
// offset off.
func (t *Text) Position(off int) (line, col int) {
	line = t.LineOf(off)
	start := t.Lines[line-1]
	return line, 1 + len([]rune(string(t.Data[start:off])))
}
