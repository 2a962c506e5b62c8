package unsnappy

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/golang/snappy"

	"github.com/kbqdev/kbq/internal/corpora"
)

// same fails t unless Decode and snappy.Decode agree on src: the same
// bytes, or both an error.
func same(t *testing.T, src []byte) {
	t.Helper()
	want, werr := snappy.Decode(nil, src)
	got, err := Decode(nil, src)
	if (err != nil) != (werr != nil) || !bytes.Equal(got, want) {
		t.Fatalf("Decode(%x) = %q, %v; snappy: %q, %v", src, got, err, want, werr)
	}
	n, err := DecodedLen(src)
	wn, werr := snappy.DecodedLen(src)
	if n != wn || (err != nil) != (werr != nil) {
		t.Fatalf("DecodedLen(%x) = %d, %v; snappy: %d, %v", src, n, err, wn, werr)
	}
}

// Blocks snappy encodes, of text with repeats near and far, decode to
// what was encoded; and so do they with bytes changed, cut or added.
func TestDecodeMatchesSnappy(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	words := []string{"pipeline", "object", " ", "\n", "Get-Item", "the ", "é", "\x00", "aaaaaaaa"}
	for n := range 500 {
		var text []byte
		for range r.IntN(3000) {
			text = append(text, words[r.IntN(len(words))]...)
			if r.IntN(40) == 0 { // a long literal
				for range r.IntN(70000) / (1 + r.IntN(8)) {
					text = append(text, byte(r.Uint32()))
				}
			}
		}
		src := snappy.Encode(nil, text)
		got, err := Decode(make([]byte, r.IntN(2*len(text)+1)), src)
		if err != nil || !bytes.Equal(got, text) {
			t.Fatalf("case %d: %d bytes decoded to %d, %v", n, len(text), len(got), err)
		}
		same(t, src)
		bad := bytes.Clone(src)
		for range 1 + r.IntN(3) {
			if len(bad) > 0 {
				bad[r.IntN(len(bad))] = byte(r.Uint32())
			}
		}
		same(t, bad)
		same(t, src[:r.IntN(len(src)+1)])
		same(t, append(bytes.Clone(src), byte(r.Uint32())))
	}
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte{})
	f.Add(snappy.Encode(nil, []byte("pipeline objects pipeline objects pipeline")))
	f.Add([]byte{5, 0xf0, 4, 0, 0, 0, 0, 'a'})
	f.Add([]byte{0x0a, 0x00, 'a', 0x05, 0x01})
	f.Fuzz(func(t *testing.T, src []byte) {
		same(t, src)
	})
}

// BenchmarkDecode decodes the repository's own markdown, a file a block,
// as an artifact stores its chunks.
func BenchmarkDecode(b *testing.B) {
	var blocks [][]byte
	size := 0
	err := corpora.MarkdownIn("../..", func(_ string, text []byte) {
		blocks = append(blocks, snappy.Encode(nil, text))
		size += len(text)
	})
	if err != nil {
		b.Fatal(err)
	}
	dst := make([]byte, 1<<20)
	b.SetBytes(int64(size))
	for b.Loop() {
		for _, src := range blocks {
			if _, err := Decode(dst, src); err != nil {
				b.Fatal(err)
			}
		}
	}
}
