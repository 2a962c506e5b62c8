package blocks

import (
	"bytes"
	"strings"
	"testing"
)

// Blocks are checked whole, the last one short, and a changed byte or a
// part that is not whole blocks is refused.
func TestCheck(t *testing.T) {
	data := bytes.Repeat([]byte("0123456789abcdef"), (2*Size+Size/2)/16) // two blocks and a half
	size := int64(len(data))
	hashes := Hashes(data)
	if !Valid(hashes, size) || Valid(hashes[1:], size) || Valid(hashes, size+Size) {
		t.Fatal("Valid accepts the wrong number of hashes")
	}
	for _, part := range []struct{ off, end int64 }{{0, Size}, {Size, 2 * Size}, {2 * Size, size}, {0, size}, {Size, size}} {
		if err := Check(hashes, size, part.off, data[part.off:part.end]); err != nil {
			t.Errorf("bytes %d to %d: %v", part.off, part.end, err)
		}
	}
	for _, part := range []struct{ off, end int64 }{{1, Size + 1}, {0, Size - 1}, {Size, size - 1}} {
		if err := Check(hashes, size, part.off, data[part.off:part.end]); err == nil || !strings.Contains(err.Error(), "not whole blocks") {
			t.Errorf("bytes %d to %d: %v, want them refused as not whole blocks", part.off, part.end, err)
		}
	}
	damaged := bytes.Clone(data)
	damaged[Size+7] ^= 1
	if err := Check(hashes, size, Size, damaged[Size:2*Size]); err == nil || !strings.Contains(err.Error(), "block 1 does not match its hash") {
		t.Errorf("a changed byte: %v", err)
	}
	if got := Hashes(nil); len(got) != 0 || !Valid(got, 0) {
		t.Errorf("an empty file has %d bytes of hashes", len(got))
	}
}
