package postings

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"math/bits"
	"sort"

	"github.com/kbqdev/kbq/internal/mmap"
)

// ErrCorrupt means a postings file is damaged or not one.
var ErrCorrupt = errors.New("corrupt postings file")

// Reader reads a postings file. It is safe for concurrent use.
type Reader struct {
	data  []byte
	docs  uint32
	terms uint32
	dict  []byte
	index []byte // u32 a dictionary block
	lens  [Fields]column
	docTable
	starts  []byte // bit set of the chunks that start a document, u64 words
	factors []byte // float64 a chunk, or nil
	unmap   func() error
	// listsEnd is where the postings lists end and the dictionary
	// begins; need, when set, is called with the bytes of a list before
	// it is read (SetNeed).
	listsEnd uint64
	need     func(off, end int64) error
}

// SetNeed has the reader call need with the bytes [off, end) of the file
// a postings list takes before reading it: a file held in part, whose
// lists are fetched as searches read them, fetches them then. It must be
// set before the reader is read.
func (r *Reader) SetNeed(need func(off, end int64) error) { r.need = need }

// ListsEnd reads the footer of a postings file of size bytes, its last
// FooterLen bytes, and returns where its postings lists end: they are the
// file's first bytes, which a search reads by term, before the
// dictionary and the tables every search reads.
func ListsEnd(footer []byte, size int64) (int64, error) {
	if len(footer) != footerLen || string(footer[:4]) != magic || size < footerLen {
		return 0, fmt.Errorf("%w: not a postings file", ErrCorrupt)
	}
	le := binary.LittleEndian
	if v := le.Uint32(footer[4:]); v != Version {
		return 0, fmt.Errorf("%w: version %d, want %d", ErrCorrupt, v, Version)
	}
	if crc32.ChecksumIEEE(footer[:footerLen-4]) != le.Uint32(footer[footerLen-4:]) {
		return 0, fmt.Errorf("%w: footer checksum mismatch", ErrCorrupt)
	}
	end := le.Uint64(footer[16:])
	if end > uint64(size-footerLen) {
		return 0, fmt.Errorf("%w: section offsets out of order", ErrCorrupt)
	}
	return int64(end), nil
}

// FooterLen is how many bytes at the end of a postings file ListsEnd
// reads.
const FooterLen = footerLen

// Open maps the postings file name.
func Open(name string) (*Reader, error) {
	data, unmap, err := mmap.Map(name)
	if err != nil {
		return nil, err
	}
	r, err := Parse(data)
	if err != nil {
		unmap()
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	r.unmap = unmap
	return r, nil
}

// Parse reads a postings file held in data, which must not change.
func Parse(data []byte) (*Reader, error) {
	if len(data) < footerLen {
		return nil, fmt.Errorf("%w: %d bytes is too short", ErrCorrupt, len(data))
	}
	foot := data[len(data)-footerLen:]
	le := binary.LittleEndian
	if string(foot[:4]) != magic {
		return nil, fmt.Errorf("%w: not a postings file", ErrCorrupt)
	}
	if v := le.Uint32(foot[4:]); v != Version {
		return nil, fmt.Errorf("%w: version %d, want %d", ErrCorrupt, v, Version)
	}
	if crc32.ChecksumIEEE(foot[:footerLen-4]) != le.Uint32(foot[footerLen-4:]) {
		return nil, fmt.Errorf("%w: footer checksum mismatch", ErrCorrupt)
	}
	r := &Reader{data: data, docs: le.Uint32(foot[8:]), terms: le.Uint32(foot[12:])}
	dictOff, indexOff, lensOff, docsOff, startsOff, factorsOff := le.Uint64(foot[16:]), le.Uint64(foot[24:]), le.Uint64(foot[32:]), le.Uint64(foot[40:]), le.Uint64(foot[48:]), le.Uint64(foot[56:])
	end := uint64(len(data) - footerLen)
	startsEnd := end
	if factorsOff != 0 {
		startsEnd = factorsOff
	}
	if dictOff > indexOff || indexOff > lensOff || lensOff > docsOff || docsOff > startsOff || startsOff > startsEnd || startsEnd > end {
		return nil, fmt.Errorf("%w: section offsets out of order", ErrCorrupt)
	}
	r.dict, r.index, r.starts = data[dictOff:indexOff], data[indexOff:lensOff], data[startsOff:startsEnd]
	r.listsEnd = dictOff
	blocks := (uint64(r.terms) + dictBlock - 1) / dictBlock
	if uint64(len(r.index)) != 4*blocks || !r.parseLengths(data[lensOff:docsOff]) || !r.parseDocTable(data[docsOff:startsOff]) || uint64(len(r.starts)) != 8*((uint64(r.docs)+63)/64) {
		return nil, fmt.Errorf("%w: section sizes do not match %d terms and %d chunks", ErrCorrupt, r.terms, r.docs)
	}
	if factorsOff != 0 {
		r.factors = data[factorsOff:end]
		if uint64(len(r.factors)) != 8*uint64(r.docs) {
			return nil, fmt.Errorf("%w: factors do not match %d chunks", ErrCorrupt, r.docs)
		}
	}
	for b := range blocks {
		if uint64(le.Uint32(r.index[4*b:])) >= uint64(len(r.dict)) {
			return nil, fmt.Errorf("%w: dictionary index out of range", ErrCorrupt)
		}
	}
	return r, nil
}

// column is one field's lengths, width bytes a chunk.
type column struct {
	b     []byte
	width int
}

// parseLengths splits the lengths section b into its columns, and reports
// whether their widths and sizes are sound.
func (r *Reader) parseLengths(b []byte) bool {
	if len(b) < Fields {
		return false
	}
	widths, b := b[:Fields], b[Fields:]
	for f, w := range widths {
		if w != 1 && w != 2 && w != 4 {
			return false
		}
		n := uint64(w) * uint64(r.docs)
		if uint64(len(b)) < n {
			return false
		}
		r.lens[f], b = column{b: b[:n], width: int(w)}, b[n:]
	}
	return len(b) == 0
}

// docTable is the document table of a postings file: the depth and path
// of each document, and for each u64 word of the starts bit set, the
// number of documents started before it.
type docTable struct {
	ranks   []byte // u32 a word of starts
	offsets []byte // u32 a document: its entry's offset in entries
	entries []byte // a document: uvarint depth, uvarint path length, path
}

// parseDocTable reads the document table in b.
func (r *Reader) parseDocTable(b []byte) bool {
	if len(b) < 4 {
		return false
	}
	n, b := uint64(binary.LittleEndian.Uint32(b)), b[4:]
	words := (uint64(r.docs) + 63) / 64
	if uint64(len(b)) < 4*words+4*n || n > uint64(r.docs) {
		return false
	}
	r.ranks, r.offsets, r.entries = b[:4*words], b[4*words:4*words+4*n], b[4*words+4*n:]
	return true
}

// Document returns the scope depth and the path of the document chunk doc
// belongs to, and the chunk's number in it, counted from 0. It reports
// false for a chunk beyond Docs or a damaged table.
func (r *Reader) Document(doc uint32) (depth int, path []byte, chunk int, ok bool) {
	if doc >= r.docs {
		return 0, nil, 0, false
	}
	le := binary.LittleEndian
	w := int(doc / 64)
	below := le.Uint64(r.starts[8*w:]) & (1<<(doc%64)<<1 - 1) // the starts up to doc
	ord := int(le.Uint32(r.ranks[4*w:])) + bits.OnesCount64(below) - 1
	if ord < 0 || 4*ord >= len(r.offsets) {
		return 0, nil, 0, false
	}
	for below == 0 {
		if w == 0 {
			return 0, nil, 0, false
		}
		w--
		below = le.Uint64(r.starts[8*w:])
	}
	chunk = int(doc) - (64*w + 63 - bits.LeadingZeros64(below))
	e := r.entries
	off := uint64(le.Uint32(r.offsets[4*ord:]))
	if off >= uint64(len(e)) {
		return 0, nil, 0, false
	}
	depth64, k1 := binary.Uvarint(e[off:])
	if k1 <= 0 || depth64 > math.MaxInt32 {
		return 0, nil, 0, false
	}
	n, k2 := binary.Uvarint(e[off+uint64(k1):])
	start := off + uint64(k1) + uint64(k2)
	if k2 <= 0 || n > uint64(len(e))-start {
		return 0, nil, 0, false
	}
	return int(depth64), e[start : start+n], chunk, true
}

// Release drops the pages of a mapped file from the process's resident
// memory; reading them again maps them again. It may be called while the
// Reader is read, but not after Close.
func (r *Reader) Release() {
	if r.unmap != nil {
		mmap.Release(r.data)
	}
}

// Close unmaps the file.
func (r *Reader) Close() error {
	if r.unmap == nil {
		return nil
	}
	return r.unmap()
}

// Docs returns the number of chunks.
func (r *Reader) Docs() uint32 { return r.docs }

// Terms returns the number of terms.
func (r *Reader) Terms() uint32 { return r.terms }

// Length returns the length of a field of chunk doc, which must be below
// Docs.
func (r *Reader) Length(doc uint32, field int) uint32 {
	c := &r.lens[field]
	switch c.width {
	case 1:
		return uint32(c.b[doc])
	case 2:
		return uint32(binary.LittleEndian.Uint16(c.b[2*int(doc):]))
	}
	return binary.LittleEndian.Uint32(c.b[4*int(doc):])
}

// Factor returns the score factor of chunk doc.
func (r *Reader) Factor(doc uint32) float64 {
	if r.factors == nil {
		return 1
	}
	return math.Float64frombits(binary.LittleEndian.Uint64(r.factors[8*doc:]))
}

// Starts reports whether chunk doc is the first of its document.
func (r *Reader) Starts(doc uint32) bool {
	return r.starts[doc/8]&(1<<(doc%8)) != 0
}

// SameDocument reports whether chunks a ≤ b belong to one document: no
// chunk after a up to b starts one.
func (r *Reader) SameDocument(a, b uint32) bool {
	for d := a + 1; d <= b; d++ {
		if r.Starts(d) {
			return false
		}
	}
	return true
}

// HasFactors reports whether some chunk's factor is not 1.
func (r *Reader) HasFactors() bool { return r.factors != nil }

// Postings is one term's postings list.
type Postings struct {
	// DF is the number of chunks holding the term.
	DF int
	// Max bounds the frequencies and lengths of the whole list as a skip
	// entry does those of a block.
	Max  Block
	data []byte // from the skip entries to the end of the file
	skip int    // length of the skip entries
}

// Lookup finds term's postings; ok is false when the segment lacks it.
func (r *Reader) Lookup(term []byte) (p Postings, ok bool, err error) {
	b, err := r.findBlock(term)
	if err != nil {
		return Postings{}, false, err
	}
	if b < 0 {
		return Postings{}, false, nil
	}
	var found bool
	var off uint64
	err = r.scanBlock(b, func(t []byte, o uint64) bool {
		switch c := bytes.Compare(t, term); {
		case c == 0:
			found, off = true, o
			return false
		case c > 0:
			return false
		}
		return true
	})
	if err != nil || !found {
		return Postings{}, false, err
	}
	p, err = r.postingsAt(off)
	return p, err == nil, err
}

// Range calls fn for each term t with from ≤ t < to in order (to nil: no
// upper bound), with the term's postings offset, until fn returns false.
// The term passed to fn is only valid during the call.
func (r *Reader) Range(from, to []byte, fn func(term []byte, p Postings) bool) error {
	blocks := len(r.index) / 4
	b, err := r.findBlock(from)
	if err != nil {
		return err
	}
	b = max(b, 0)
	var ferr error
	for ; b < blocks; b++ {
		more := true
		err := r.scanBlock(b, func(t []byte, o uint64) bool {
			if bytes.Compare(t, from) < 0 {
				return true
			}
			if to != nil && bytes.Compare(t, to) >= 0 {
				more = false
				return false
			}
			p, err := r.postingsAt(o)
			if err != nil {
				ferr = err
				more = false
				return false
			}
			more = fn(t, p)
			return more
		})
		if err != nil {
			return err
		}
		if ferr != nil {
			return ferr
		}
		if !more {
			return nil
		}
	}
	return nil
}

// findBlock returns the last dictionary block whose first term is ≤ term,
// or -1 when term comes before them all.
func (r *Reader) findBlock(term []byte) (int, error) {
	var derr error
	b := sort.Search(len(r.index)/4, func(i int) bool {
		first, err := r.firstTerm(i)
		if err != nil {
			derr = err
			return true
		}
		return bytes.Compare(first, term) > 0
	}) - 1
	return b, derr
}

func (r *Reader) blockStart(b int) []byte {
	return r.dict[binary.LittleEndian.Uint32(r.index[4*b:]):]
}

// firstTerm returns the first term of dictionary block b.
func (r *Reader) firstTerm(b int) ([]byte, error) {
	d := r.blockStart(b)
	_, n1 := binary.Uvarint(d)
	l, n2 := uvarintAt(d, n1)
	if n1 <= 0 || n2 <= 0 || uint64(len(d)-n1-n2) < l {
		return nil, fmt.Errorf("%w: dictionary block %d", ErrCorrupt, b)
	}
	return d[n1+n2 : n1+n2+int(l)], nil
}

// scanBlock calls fn with the terms of dictionary block b in order, until
// fn returns false.
func (r *Reader) scanBlock(b int, fn func(term []byte, off uint64) bool) error {
	d := r.blockStart(b)
	var term []byte
	count := dictBlock
	if last := int(r.terms) - b*dictBlock; last < count {
		count = last
	}
	pos := 0
	for range count {
		shared, n1 := uvarintAt(d, pos)
		suffix, n2 := uvarintAt(d, pos+max(n1, 0))
		if n1 <= 0 || n2 <= 0 || shared > uint64(len(term)) {
			return fmt.Errorf("%w: dictionary block %d", ErrCorrupt, b)
		}
		pos += n1 + n2
		if uint64(len(d)-pos) < suffix {
			return fmt.Errorf("%w: dictionary block %d", ErrCorrupt, b)
		}
		term = append(term[:shared], d[pos:pos+int(suffix)]...)
		pos += int(suffix)
		off, n3 := uvarintAt(d, pos)
		if n3 <= 0 {
			return fmt.Errorf("%w: dictionary block %d", ErrCorrupt, b)
		}
		pos += n3
		if !fn(term, off) {
			return nil
		}
	}
	return nil
}

// postingsAt reads the head of the postings list at off.
func (r *Reader) postingsAt(off uint64) (Postings, error) {
	if off >= uint64(len(r.data)) {
		return Postings{}, fmt.Errorf("%w: postings offset out of range", ErrCorrupt)
	}
	if r.need != nil {
		end, err := r.listEnd(off)
		if err == nil {
			err = r.need(int64(off), int64(end))
		}
		if err != nil {
			return Postings{}, err
		}
	}
	d := r.data[off:]
	df, n1 := binary.Uvarint(d)
	skip, n2 := uvarintAt(d, max(n1, 0))
	if n1 <= 0 || n2 <= 0 || df == 0 || df > uint64(r.docs) {
		return Postings{}, fmt.Errorf("%w: postings list at %d", ErrCorrupt, off)
	}
	p := Postings{DF: int(df)}
	pos, ok := readBound(d, n1+n2, &p.Max)
	if !ok || skip > uint64(len(d)-pos) {
		return Postings{}, fmt.Errorf("%w: postings list at %d", ErrCorrupt, off)
	}
	p.data, p.skip = d[pos:], int(skip)
	return p, nil
}

// listEnd returns where the postings list at off ends: where the next
// term's begins, the lists being written in the dictionary's order, or
// where the lists end.
func (r *Reader) listEnd(off uint64) (uint64, error) {
	// The last block whose first list begins at or before off holds it.
	var derr error
	b := sort.Search(len(r.index)/4, func(i int) bool {
		first := uint64(0)
		derr = r.scanBlock(i, func(_ []byte, o uint64) bool { first = o; return false })
		return derr != nil || first > off
	}) - 1
	if derr != nil {
		return 0, derr
	}
	end := r.listsEnd
	for b = max(b, 0); b < len(r.index)/4; b++ {
		found := false
		err := r.scanBlock(b, func(_ []byte, o uint64) bool {
			if o > off {
				end, found = o, true
			}
			return !found
		})
		if err != nil {
			return 0, err
		}
		if found {
			break
		}
	}
	if end <= off || end > r.listsEnd {
		return 0, fmt.Errorf("%w: postings offset out of range", ErrCorrupt)
	}
	return end, nil
}

// uvarintAt decodes a uvarint at d[pos:]; n ≤ 0 when there is none.
func uvarintAt(d []byte, pos int) (uint64, int) {
	if pos < 0 || pos >= len(d) {
		return 0, 0
	}
	return binary.Uvarint(d[pos:])
}

// readBound reads what appendBound wrote at d[pos:] into b and returns the
// position after it.
func readBound(d []byte, pos int, b *Block) (int, bool) {
	for f := range Fields {
		n, k := uvarintAt(d, pos)
		if k <= 0 || n > MaxPairs {
			return pos, false
		}
		pos += k
		b.N[f] = uint8(n)
		for i := range int(n) {
			freq, k1 := uvarintAt(d, pos)
			length, k2 := uvarintAt(d, pos+max(k1, 0))
			if k1 <= 0 || k2 <= 0 {
				return pos, false
			}
			pos += k1 + k2
			b.Pairs[f][i] = Pair{Freq: uint32(min(freq, math.MaxUint32)), Len: uint32(min(length, math.MaxUint32))}
		}
	}
	return pos, true
}
