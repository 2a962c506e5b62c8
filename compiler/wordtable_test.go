package compiler

import (
	"math/rand/v2"
	"testing"
)

// The table answers as a map of the same words does, through its growth,
// and a word hashes alike wherever its bytes lie.
func TestWordTable(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var table wordTable
	table.reset()
	want := map[string]int32{}
	word := func() []byte {
		b := make([]byte, 1+r.IntN(20))
		for i := range b {
			b[i] = "abcdeé\xc3\xa9XYZ0123"[r.IntN(15)]
		}
		return b
	}
	for i := range 50000 {
		w := word()
		// The word inside other text, as fields hand it over.
		prefix := word()
		text := append(append(append([]byte{}, prefix...), w...), word()...)
		start := len(prefix)
		h := wordHash(text, start, start+len(w))
		if h != wordHash(w, 0, len(w)) {
			t.Fatalf("%q hashes apart in %q", w, text)
		}
		id, ok := table.lookup(w, h)
		wid, wok := want[string(w)]
		if ok != wok || id != wid {
			t.Fatalf("word %d %q: (%d, %v), want (%d, %v)", i, w, id, ok, wid, wok)
		}
		if !ok {
			table.add(w, h, int32(i))
			want[string(w)] = int32(i)
		}
	}
	if table.len() != len(want) {
		t.Errorf("%d words, want %d", table.len(), len(want))
	}
	table.reset()
	if _, ok := table.lookup([]byte("abc"), wordHash([]byte("abc"), 0, 3)); ok || table.len() != 0 {
		t.Error("a reset table still holds words")
	}
}
