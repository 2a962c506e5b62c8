package compiler

import (
	"bytes"
	"encoding/binary"
	mathbits "math/bits"
)

// wordTable maps the words of a fieldBuilder's vocabulary, as written, to
// their term ids: an open-addressed table of each word's hash, length and
// place in an arena of the words' bytes. Indexing looks a word up for
// every word of every field; with a map of strings those look-ups were a
// tenth of a build's CPU, each hashing the word, then following the key
// to its bytes in an allocation of its own, one per word learned.
type wordTable struct {
	slots []wordSlot // a power of two of them, at most half full
	words []byte     // the words' bytes, one after another
	n     int
}

type wordSlot struct {
	tag uint32 // the hash's high bits, never 0; 0: empty
	off uint32 // the word's bytes: words[off : off+len]
	len uint32
	id  int32
}

// tagOf is the part of a word's hash a slot keeps, never 0.
func tagOf(h uint64) uint32 { return uint32(h>>32) | 1<<31 }

// reset empties the table, keeping its memory.
func (t *wordTable) reset() {
	if t.slots == nil {
		t.slots = make([]wordSlot, 1<<12)
	}
	clear(t.slots)
	t.words, t.n = t.words[:0], 0
}

// len is the number of words in the table.
func (t *wordTable) len() int { return t.n }

// lookup returns the term id of word, whose hash is h (wordHash).
func (t *wordTable) lookup(word []byte, h uint64) (int32, bool) {
	mask, tag := uint64(len(t.slots)-1), tagOf(h)
	for i := h & mask; ; i = (i + 1) & mask {
		s := &t.slots[i]
		switch {
		case s.tag == 0:
			return 0, false
		case s.tag == tag && int(s.len) == len(word) && bytes.Equal(t.words[s.off:s.off+s.len], word):
			return s.id, true
		}
	}
}

// add adds word, hashed h and not in the table, with term id id.
func (t *wordTable) add(word []byte, h uint64, id int32) {
	if 2*(t.n+1) > len(t.slots) {
		t.grow()
	}
	off := uint32(len(t.words))
	t.words = append(t.words, word...)
	t.put(h, wordSlot{tag: tagOf(h), off: off, len: uint32(len(word)), id: id})
	t.n++
}

func (t *wordTable) put(h uint64, s wordSlot) {
	mask := uint64(len(t.slots) - 1)
	i := h & mask
	for t.slots[i].tag != 0 {
		i = (i + 1) & mask
	}
	t.slots[i] = s
}

// grow doubles the slots, placing each word again by its hash, computed
// anew from its bytes.
func (t *wordTable) grow() {
	old := t.slots
	t.slots = make([]wordSlot, 2*len(old))
	for _, s := range old {
		if s.tag != 0 {
			t.put(wordHash(t.words, int(s.off), int(s.off+s.len)), s)
		}
	}
}

// wordHash hashes word, the bytes text[start:end], for wordTable: eight
// bytes at a time, each multiplied in, read past the word's end where
// text goes on and masked.
func wordHash(text []byte, start, end int) uint64 {
	const m1, m2 = 0x9e3779b97f4a7c15, 0xbf58476d1ce4e5b9
	h := uint64(end-start) * m1
	i := start
	for ; i+8 <= end; i += 8 {
		h = (h ^ binary.LittleEndian.Uint64(text[i:])) * m2
		h ^= h >> 31
	}
	if rest := end - i; rest > 0 {
		var x uint64
		if i+8 <= len(text) {
			x = binary.LittleEndian.Uint64(text[i:]) & (1<<(8*rest) - 1)
		} else {
			for k := rest - 1; k >= 0; k-- {
				x = x<<8 | uint64(text[i+k])
			}
		}
		h = (h ^ x) * m2
		h ^= h >> 31
	}
	return mathbits.RotateLeft64(h*m1, 17)
}
