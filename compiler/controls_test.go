package compiler

import (
	"math/rand/v2"
	"testing"
)

// controlAtBytewise is controlAt a byte at a time, as it was.
func controlAtBytewise(b []byte) int {
	for i := range b {
		if isControlAt(b, i) {
			return i
		}
	}
	return -1
}

// denseBytes returns up to 40 random letters, one in oneIn of them
// replaced by a byte of alphabet.
func denseBytes(r *rand.Rand, alphabet []byte, oneIn int) []byte {
	b := make([]byte, r.IntN(40))
	for i := range b {
		b[i] = 'a' + byte(r.IntN(26))
		if r.IntN(oneIn) == 0 {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
	}
	return b
}

// The scan eight bytes at a time finds the control character the scan a
// byte at a time finds, in text dense with the bytes it tests and near
// their edges.
func TestControlAtWords(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte("ab \t\n\r\x00\x1b\x1f\x7f\x80\xc2\x85\xc3\x9f\xff")
	for n := range 40000 {
		b := denseBytes(r, alphabet, 8)
		if got, want := controlAt(b), controlAtBytewise(b); got != want {
			t.Fatalf("case %d %q: %d, want %d", n, b, got, want)
		}
	}
}

func BenchmarkControlAt(b *testing.B) {
	text := make([]byte, 0, 64<<10)
	for len(text) < 64<<10 {
		text = append(text, "Get-ChildItem -Path C:\\Windows -Recurse | Where-Object { $_.Length -gt 1MB }\n\tindented line with some words.\n"...)
	}
	b.SetBytes(int64(len(text)))
	b.Run("words", func(b *testing.B) {
		for b.Loop() {
			controlAt(text)
		}
	})
	b.Run("bytes", func(b *testing.B) {
		for b.Loop() {
			controlAtBytewise(text)
		}
	})
}
