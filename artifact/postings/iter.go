package postings

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
)

// NoMore is the chunk number of an iterator past its last chunk.
const NoMore = math.MaxUint32

// Block is what a skip entry tells of a block without decoding it.
type Block struct {
	// Last is the last chunk of the block.
	Last uint32
	// Pairs[f][:N[f]] bounds the term's frequency in field f and the
	// field's length: each chunk holding the term in the field has a
	// frequency at most the Freq and a length at least the Len of one of
	// them. None when no chunk holds the term in the field.
	Pairs [Fields][MaxPairs]Pair
	N     [Fields]uint8
}

// MaxPairs is the most pairs a bound keeps for a field.
const MaxPairs = 4

// Pair is a frequency and a field length.
type Pair struct{ Freq, Len uint32 }

// Iterator walks a postings list in chunk order, decoding only the blocks
// it stops in. The zero value is exhausted; Reset starts it on a list.
type Iterator struct {
	p        Postings
	docs     uint32 // chunks of the segment
	skipPos  int
	dataPos  int // start of the current block's data in p.data
	dataLen  int
	prevLast int64 // last chunk of the block before the current one
	block    Block
	inBlock  bool
	decoded  bool
	started  bool
	n, i     int
	cur      uint32
	err      error
	doc      [BlockSize]uint32
	freq     [BlockSize][Fields]uint32
	only     [Fields]bool // with masked, the fields a chunk must hold the term in
	masked   bool
}

// Reset starts the iterator on p, a list of a segment of docs chunks,
// before its first chunk.
func (it *Iterator) Reset(p Postings, docs uint32) {
	*it = Iterator{p: p, docs: docs, dataPos: p.skip, prevLast: -1}
}

// Doc returns the current chunk, NoMore past the end. It is valid after
// Next or Advance.
func (it *Iterator) Doc() uint32 { return it.cur }

// Freqs returns the term's frequency in each field of the current chunk.
func (it *Iterator) Freqs() *[Fields]uint32 { return &it.freq[it.i] }

// Err returns the error that stopped the iterator, if any.
func (it *Iterator) Err() error { return it.err }

// Block returns the skip entry of the current block. It is valid after
// Shallow, Next or Advance returned a chunk.
func (it *Iterator) Block() *Block { return &it.block }

// DF returns the length of the list.
func (it *Iterator) DF() int { return it.p.DF }

// Only makes the iterator pass over the chunks that hold the term in none
// of the fields in: a search of some fields. Call it after Reset.
func (it *Iterator) Only(in [Fields]bool) { it.only, it.masked = in, true }

// Next moves to the next chunk and returns it.
func (it *Iterator) Next() uint32 { return it.settle(it.next()) }

// Advance moves to the first chunk at or after target and returns it. It
// never moves backwards.
func (it *Iterator) Advance(target uint32) uint32 { return it.settle(it.advance(target)) }

// settle moves on from cur, the current chunk, past those that hold the
// term in no field Only names.
func (it *Iterator) settle(cur uint32) uint32 {
	for it.masked && cur != NoMore {
		if !it.blockNames() {
			// No chunk of the block holds the term in those fields: on to
			// a block that has one, reading skip entries only.
			for {
				if !it.nextBlock() {
					return it.stop()
				}
				if it.blockNames() {
					break
				}
			}
			if !it.decode() {
				return it.stop()
			}
			it.i, it.cur = 0, it.doc[0]
			cur = it.cur
			continue
		}
		if it.holds() {
			return cur
		}
		cur = it.next()
	}
	return cur
}

// blockNames reports whether a chunk of the current block holds the term
// in a field Only names, as its bound tells.
func (it *Iterator) blockNames() bool {
	for f, in := range it.only {
		if in && it.block.N[f] > 0 {
			return true
		}
	}
	return false
}

// holds reports whether the current chunk holds the term in a field Only
// names.
func (it *Iterator) holds() bool {
	f := &it.freq[it.i]
	for i, in := range it.only {
		if in && f[i] > 0 {
			return true
		}
	}
	return false
}

func (it *Iterator) next() uint32 {
	if !it.started {
		return it.Advance(0)
	}
	if it.cur == NoMore {
		return NoMore
	}
	if !it.decoded { // Shallow moved past the current chunk's block
		return it.Advance(it.cur + 1)
	}
	it.i++
	if it.i < it.n {
		it.cur = it.doc[it.i]
		return it.cur
	}
	if !it.nextBlock() || !it.decode() {
		return it.stop()
	}
	it.i = 0
	it.cur = it.doc[0]
	return it.cur
}

func (it *Iterator) advance(target uint32) uint32 {
	if it.started && (it.cur == NoMore || it.cur >= target) {
		return it.cur
	}
	it.started = true
	if !it.Shallow(target) {
		return it.stop()
	}
	if !it.decoded {
		if !it.decode() {
			return it.stop()
		}
		it.i = 0
	}
	for it.i < it.n && it.doc[it.i] < target {
		it.i++
	}
	if it.i == it.n { // a block whose last chunk is ≥ target holds one
		it.err = fmt.Errorf("%w: block ends before its last chunk", ErrCorrupt)
		return it.stop()
	}
	it.cur = it.doc[it.i]
	return it.cur
}

// Shallow moves to the block that holds the first chunk at or after
// target without decoding it, and reports whether there is one. Block
// then describes it. It never moves backwards.
func (it *Iterator) Shallow(target uint32) bool {
	if !it.inBlock && !it.nextBlock() {
		return false
	}
	for it.block.Last < target {
		if !it.nextBlock() {
			return false
		}
	}
	return true
}

func (it *Iterator) stop() uint32 {
	it.started = true
	it.cur = NoMore
	it.inBlock = false
	it.skipPos = it.p.skip
	return NoMore
}

// nextBlock reads the next skip entry.
func (it *Iterator) nextBlock() bool {
	if it.skipPos >= it.p.skip {
		it.inBlock = false
		return false
	}
	if it.inBlock {
		it.prevLast = int64(it.block.Last)
		it.dataPos += it.dataLen
	}
	d := it.p.data[:it.p.skip]
	pos := it.skipPos
	next := func() uint64 {
		v, n := uvarintAt(d, pos)
		if n <= 0 {
			it.err = fmt.Errorf("%w: skip entry", ErrCorrupt)
			pos = len(d)
			return 0
		}
		pos += n
		return v
	}
	delta, length := next(), next()
	var b Block
	if p, ok := readBound(d, pos, &b); ok {
		pos = p
	} else if it.err == nil {
		it.err = fmt.Errorf("%w: skip entry", ErrCorrupt)
	}
	last := it.prevLast + 1 + int64(min(delta, math.MaxUint32))
	if it.err == nil && (last >= int64(it.docs) || length > uint64(len(it.p.data)-it.dataPos)) {
		it.err = fmt.Errorf("%w: skip entry out of range", ErrCorrupt)
	}
	if it.err != nil {
		it.skipPos = it.p.skip
		it.inBlock = false
		return false
	}
	b.Last = uint32(last)
	it.block, it.skipPos, it.dataLen = b, pos, int(length)
	it.inBlock, it.decoded = true, false
	if it.dataPos+it.dataLen > len(it.p.data) {
		it.err = fmt.Errorf("%w: block past the end of the file", ErrCorrupt)
		it.inBlock = false
		return false
	}
	return true
}

// decode decodes the current block.
func (it *Iterator) decode() bool {
	d := it.p.data[it.dataPos : it.dataPos+it.dataLen]
	prev := it.prevLast
	n, pos := 0, 0
	for pos < len(d) {
		v, k := uint64(d[pos]), 1 // most values fit a byte
		if v >= 0x80 {
			v, k = binary.Uvarint(d[pos:])
		}
		if k <= 0 || n == BlockSize {
			return it.corrupt()
		}
		pos += k
		doc := prev + 1 + int64(v>>Fields)
		if doc > int64(it.block.Last) {
			return it.corrupt()
		}
		fr := &it.freq[n]
		*fr = [Fields]uint32{}
		// The fields holding the term, in order: most often one.
		for mask := v & (1<<Fields - 1); mask != 0; mask &= mask - 1 {
			if pos >= len(d) {
				return it.corrupt()
			}
			x, k := uint64(d[pos]), 1
			if x >= 0x80 {
				if x, k = binary.Uvarint(d[pos:]); k <= 0 {
					return it.corrupt()
				}
			}
			pos += k
			fr[bits.TrailingZeros64(mask)&(Fields-1)] = uint32(min(x, math.MaxUint32))
		}
		it.doc[n] = uint32(doc)
		prev = doc
		n++
	}
	if n == 0 || prev != int64(it.block.Last) {
		return it.corrupt()
	}
	it.n, it.decoded = n, true
	return true
}

func (it *Iterator) corrupt() bool {
	it.err = fmt.Errorf("%w: block data", ErrCorrupt)
	it.inBlock = false
	return false
}
