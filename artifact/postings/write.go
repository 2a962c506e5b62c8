package postings

import (
	"bufio"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"math/bits"
	"slices"
	"strings"
)

const (
	// Fields is the number of text fields of a chunk.
	Fields = 4
	// BlockSize is the number of chunks of a full block.
	BlockSize = 128
	// Version is the version of the file format.
	Version = 2

	magic     = "KBQT"
	dictBlock = 32
	// footerLen: magic, version, docs, terms, six offsets, CRC of the rest.
	footerLen = 4 + 4 + 4 + 4 + 6*8 + 4
)

// FileName is the name of the postings file of segment id.
func FileName(id uint64) string { return fmt.Sprintf("%012x.kbt", id) }

// posting is one chunk holding a term.
type posting struct {
	doc  uint32
	freq [Fields]uint32
}

// Writer collects the postings of a segment in memory. It is not safe for
// concurrent use.
//
// It records each occurrence of a term in a field of a chunk in one array,
// in the order they come, and groups them by term (a counting sort) when
// it writes: a list of its own for each term grew by copying, and cost
// large builds a tenth of the memory they allocated.
type Writer struct {
	ids     map[string]int32
	terms   []string
	byKey   []int32 // AddTermKey's keys: term id + 1, 0 for none
	keys    []int32 // the keys set in byKey
	occs    []occurrence
	lens    []uint32 // Fields a chunk
	starts  []uint64 // bit set: the chunk starts a document
	table   docList
	started bool // StartDocument was called since the last AddDoc
	factors []float64
	ones    bool // every factor is 1
	docs    uint32

	// Scratch for WriteTo, kept for the next segment.
	sorted []occurrence
	list   []posting
	enc    encoder
}

// occurrence is a term in a field of a chunk, and how often it occurs.
type occurrence struct {
	key  uint32 // term id << 2 | field
	doc  uint32
	freq uint32
}

// NewWriter returns an empty Writer.
func NewWriter() *Writer { return &Writer{ids: make(map[string]int32), ones: true} }

// Reset empties w for the next segment, keeping its memory: one segment's
// arrays are about the size of the next one's.
func (w *Writer) Reset() {
	clear(w.ids)
	for _, k := range w.keys {
		w.byKey[k] = 0
	}
	w.keys = w.keys[:0]
	w.terms, w.occs = w.terms[:0], w.occs[:0]
	w.lens, w.starts, w.factors = w.lens[:0], w.starts[:0], w.factors[:0]
	w.table.reset()
	w.ones, w.docs, w.started = true, 0, false
}

// StartDocument starts a document whose chunks AddDoc adds next: its
// path, and its scope's depth (knowledge.ScopeDepth). Search breaks ties
// between chunks of equal scores with them. A document with no chunks
// leaves no trace.
func (w *Writer) StartDocument(depth int, path []byte) {
	if w.started {
		w.table.pop()
	}
	w.table.add(depth, path)
	w.started = true
}

// AddDoc starts the next chunk, numbered from 0, whose scores are
// multiplied by factor. It belongs to the document StartDocument started
// last.
func (w *Writer) AddDoc(factor float64) {
	w.starts = setBit(w.starts, w.docs, w.started)
	w.started = false
	w.docs++
	w.lens = append(w.lens, make([]uint32, Fields)...)
	w.factors = append(w.factors, factor)
	w.ones = w.ones && factor == 1
}

// SetLength sets the length in terms of a field of the current chunk.
func (w *Writer) SetLength(field int, n int) {
	w.lens[len(w.lens)-Fields+field] = uint32(min(uint64(n), math.MaxUint32))
}

// AddTerm records that term occurs freq times in a field of the current
// chunk.
func (w *Writer) AddTerm(field int, term []byte, freq int) {
	w.add(w.id(term), field, freq)
}

// AddTermKey is AddTerm for a caller that numbers its terms: key (≥ 0)
// stands for term until Reset, and finds it without hashing it again.
func (w *Writer) AddTermKey(field int, key int32, term []byte, freq int) {
	if int(key) >= len(w.byKey) {
		w.byKey = append(w.byKey, make([]int32, int(key)+1-len(w.byKey))...)
	}
	id := w.byKey[key] - 1
	if id < 0 {
		id = w.id(term)
		w.byKey[key] = id + 1
		w.keys = append(w.keys, key)
	}
	w.add(id, field, freq)
}

// id returns the id of term, numbering it if it is new.
func (w *Writer) id(term []byte) int32 {
	id, ok := w.ids[string(term)]
	if !ok {
		id = int32(len(w.terms))
		t := string(term)
		w.ids[t] = id
		w.terms = append(w.terms, t)
	}
	return id
}

func (w *Writer) add(id int32, field int, freq int) {
	w.occs = append(w.occs, occurrence{
		key:  uint32(id)<<2 | uint32(field),
		doc:  w.docs - 1,
		freq: uint32(min(uint64(freq), math.MaxUint32)),
	})
}

// WriteTo writes the postings file.
func (w *Writer) WriteTo(out io.Writer) (int64, error) {
	// Group the occurrences by term, keeping their order (by chunk, then
	// field): each term's start in sorted, then each occurrence to its
	// place.
	starts := make([]uint32, len(w.terms)+1)
	for _, o := range w.occs {
		starts[o.key>>2+1]++
	}
	for id := range w.terms {
		starts[id+1] += starts[id]
	}
	w.sorted = slices.Grow(w.sorted[:0], len(w.occs))[:len(w.occs)]
	next := slices.Clone(starts[:len(w.terms)])
	for _, o := range w.occs {
		id := o.key >> 2
		w.sorted[next[id]] = o
		next[id]++
	}
	order := make([]int32, len(w.terms))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int { return strings.Compare(w.terms[a], w.terms[b]) })
	fw := newFileWriter(out)
	var buf []byte
	for _, id := range order {
		list := w.list[:0]
		for _, o := range w.sorted[starts[id]:starts[id+1]] {
			if n := len(list); n == 0 || list[n-1].doc != o.doc {
				list = append(list, posting{doc: o.doc})
			}
			p := &list[len(list)-1]
			p.freq[o.key&3] += o.freq
		}
		w.list = list
		buf = w.enc.encodeList(buf[:0], list, w.lens)
		fw.addTerm(w.terms[id], buf)
	}
	var factors []float64
	if !w.ones {
		factors = w.factors
	}
	return fw.finish(w.docs, w.lens, w.starts, factors, &w.table)
}

// setBit sets bit i of set to v, growing it as needed.
func setBit(set []uint64, i uint32, v bool) []uint64 {
	for uint32(len(set)) <= i/64 {
		set = append(set, 0)
	}
	if v {
		set[i/64] |= 1 << (i % 64)
	}
	return set
}

// fileWriter writes a postings file from terms in order.
type fileWriter struct {
	w        *bufio.Writer
	off      uint64
	err      error
	dict     []byte
	index    []uint32
	lastTerm string
	terms    uint32
}

func newFileWriter(out io.Writer) *fileWriter {
	return &fileWriter{w: bufio.NewWriterSize(out, 1<<16)}
}

func (fw *fileWriter) write(p []byte) {
	if fw.err != nil {
		return
	}
	_, fw.err = fw.w.Write(p)
	fw.off += uint64(len(p))
}

// addTerm writes a term's encoded postings; terms come in increasing order.
func (fw *fileWriter) addTerm(term string, list []byte) {
	if fw.terms%dictBlock == 0 {
		fw.index = append(fw.index, uint32(len(fw.dict)))
		fw.lastTerm = ""
	}
	shared := commonPrefix(fw.lastTerm, term)
	fw.dict = binary.AppendUvarint(fw.dict, uint64(shared))
	fw.dict = binary.AppendUvarint(fw.dict, uint64(len(term)-shared))
	fw.dict = append(fw.dict, term[shared:]...)
	fw.dict = binary.AppendUvarint(fw.dict, fw.off)
	fw.lastTerm = term
	fw.terms++
	fw.write(list)
}

func commonPrefix(a, b string) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// finish writes the dictionary, the lengths, the document table, the
// document starts, the factors (nil when all are 1) and the footer.
func (fw *fileWriter) finish(docs uint32, lens []uint32, starts []uint64, factors []float64, table *docList) (int64, error) {
	if uint64(len(fw.dict)) > math.MaxUint32 {
		return 0, errors.New("write postings: dictionary over 4 GiB")
	}
	if uint64(len(table.entries)) > math.MaxUint32 {
		return 0, errors.New("write postings: document paths over 4 GiB")
	}
	n := 0
	for _, w := range starts {
		n += bits.OnesCount64(w)
	}
	if n != len(table.offsets) || (docs > 0 && (len(starts) == 0 || starts[0]&1 == 0)) {
		return 0, fmt.Errorf("write postings: %d documents named for %d started", len(table.offsets), n)
	}
	dictOff := fw.off
	fw.write(fw.dict)
	indexOff := fw.off
	var b []byte
	for _, o := range fw.index {
		b = binary.LittleEndian.AppendUint32(b, o)
	}
	fw.write(b)
	lensOff := fw.off
	b = fw.writeLengths(b[:0], docs, lens)
	docsOff := fw.off
	fw.write(table.appendHead(b[:0], docs, starts))
	fw.write(table.entries)
	startsOff := fw.off
	b = b[:0]
	for i := range (docs + 63) / 64 {
		var w uint64
		if int(i) < len(starts) {
			w = starts[i]
		}
		b = binary.LittleEndian.AppendUint64(b, w)
	}
	fw.write(b)
	var factorsOff uint64
	if factors != nil {
		factorsOff = fw.off
		b = b[:0]
		for _, f := range factors {
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(f))
		}
		fw.write(b)
	}
	foot := make([]byte, 0, footerLen)
	foot = append(foot, magic...)
	foot = binary.LittleEndian.AppendUint32(foot, Version)
	foot = binary.LittleEndian.AppendUint32(foot, docs)
	foot = binary.LittleEndian.AppendUint32(foot, fw.terms)
	for _, o := range []uint64{dictOff, indexOff, lensOff, docsOff, startsOff, factorsOff} {
		foot = binary.LittleEndian.AppendUint64(foot, o)
	}
	foot = binary.LittleEndian.AppendUint32(foot, crc32.ChecksumIEEE(foot))
	fw.write(foot)
	if fw.err == nil {
		fw.err = fw.w.Flush()
	}
	if fw.err != nil {
		return 0, fmt.Errorf("write postings: %w", fw.err)
	}
	return int64(fw.off), nil
}

// writeLengths writes the lengths section, with b as scratch: for each
// field the width in bytes of its lengths, then each field's column of
// lengths, one a chunk.
// A column is as wide as its longest field needs, so a segment whose
// headings are all under 256 terms keeps them in a byte each. Queries read
// one length per field per scored chunk, in no order the cache can guess:
// narrow columns, one field's beside each other, keep them in fewer cache
// lines than rows of four u32s did, which cost a third of a query's time
// at 690k chunks.
func (fw *fileWriter) writeLengths(b []byte, docs uint32, lens []uint32) []byte {
	var widths [Fields]int
	for f := range Fields {
		longest := uint32(0)
		for d := range int(docs) {
			longest = max(longest, lens[d*Fields+f])
		}
		widths[f] = lengthWidth(longest)
		b = append(b, byte(widths[f]))
	}
	for f, w := range widths {
		for d := range int(docs) {
			n := lens[d*Fields+f]
			switch w {
			case 1:
				b = append(b, byte(n))
			case 2:
				b = binary.LittleEndian.AppendUint16(b, uint16(n))
			default:
				b = binary.LittleEndian.AppendUint32(b, n)
			}
			if len(b) >= 1<<16 {
				fw.write(b)
				b = b[:0]
			}
		}
	}
	fw.write(b)
	return b
}

// docList is the document table of a segment being written: the depth
// and path of each document, in chunk order.
type docList struct {
	entries []byte   // a document: uvarint depth, uvarint path length, path
	offsets []uint32 // where each document's entry starts in entries
}

func (t *docList) add(depth int, path []byte) {
	t.offsets = append(t.offsets, uint32(len(t.entries)))
	t.entries = binary.AppendUvarint(t.entries, uint64(max(depth, 0)))
	t.entries = binary.AppendUvarint(t.entries, uint64(len(path)))
	t.entries = append(t.entries, path...)
}

// pop removes the last document.
func (t *docList) pop() {
	n := len(t.offsets) - 1
	t.entries, t.offsets = t.entries[:t.offsets[n]], t.offsets[:n]
}

func (t *docList) reset() { t.entries, t.offsets = t.entries[:0], t.offsets[:0] }

// appendHead appends what precedes the entries in the file: the number of
// documents; for each u64 word of starts, the number of documents started
// before it; each document's entry offset.
func (t *docList) appendHead(b []byte, docs uint32, starts []uint64) []byte {
	b = binary.LittleEndian.AppendUint32(b, uint32(len(t.offsets)))
	before := uint32(0)
	for i := range (docs + 63) / 64 {
		b = binary.LittleEndian.AppendUint32(b, before)
		if int(i) < len(starts) {
			before += uint32(bits.OnesCount64(starts[i]))
		}
	}
	for _, o := range t.offsets {
		b = binary.LittleEndian.AppendUint32(b, o)
	}
	return b
}

// lengthWidth returns the bytes a length up to n needs: 1, 2 or 4.
func lengthWidth(n uint32) int {
	switch {
	case n <= math.MaxUint8:
		return 1
	case n <= math.MaxUint16:
		return 2
	}
	return 4
}

// encoder keeps the memory of one list's encoding for the next.
type encoder struct {
	skip, data            []byte
	listPairs, blockPairs [Fields][]Pair
}

// encodeList appends the encoding of one term's postings to buf; lens holds
// the field lengths of the chunks, Fields a chunk.
func (e *encoder) encodeList(buf []byte, list []posting, lens []uint32) []byte {
	buf = binary.AppendUvarint(buf, uint64(len(list)))
	skip, data := e.skip[:0], e.data[:0]
	prevLast := int64(-1)
	listPairs, blockPairs := &e.listPairs, &e.blockPairs
	for f := range Fields {
		listPairs[f] = listPairs[f][:0]
	}
	for start := 0; start < len(list); start += BlockSize {
		block := list[start:min(start+BlockSize, len(list))]
		n := len(data)
		prev := prevLast
		for f := range Fields {
			blockPairs[f] = blockPairs[f][:0]
		}
		for _, p := range block {
			var mask uint64
			for f, fr := range p.freq {
				if fr != 0 {
					mask |= 1 << f
					blockPairs[f] = append(blockPairs[f], Pair{Freq: fr, Len: lens[int(p.doc)*Fields+f]})
				}
			}
			data = binary.AppendUvarint(data, uint64(int64(p.doc)-(prev+1))<<Fields|mask)
			for _, fr := range p.freq {
				if fr != 0 {
					data = binary.AppendUvarint(data, uint64(fr))
				}
			}
			prev = int64(p.doc)
		}
		skip = binary.AppendUvarint(skip, uint64(prev-(prevLast+1)))
		skip = binary.AppendUvarint(skip, uint64(len(data)-n))
		for f := range Fields {
			blockPairs[f] = pareto(blockPairs[f])
			if start == 0 {
				listPairs[f] = append(listPairs[f][:0], blockPairs[f]...)
			} else {
				listPairs[f] = pareto(append(listPairs[f], blockPairs[f]...))
			}
		}
		skip = appendBound(skip, blockPairs)
		prevLast = prev
	}
	e.skip, e.data = skip, data
	buf = binary.AppendUvarint(buf, uint64(len(skip)))
	buf = appendBound(buf, listPairs)
	buf = append(buf, skip...)
	return append(buf, data...)
}

// pareto reduces pairs, in place, to at most MaxPairs that bound them all:
// the pairs no other has a higher frequency and a shorter length than,
// with neighbours joined (the higher frequency, the shorter length) while
// there are too many.
func pareto(pairs []Pair) []Pair {
	if len(pairs) <= 1 {
		return pairs
	}
	// Only the shortest length of each frequency can be on the frontier.
	// Frequencies are mostly small: those below 64 take one pass and no
	// sort; the rest, moved to the front, are sorted.
	var shortest [64]uint32
	var seen uint64
	high := 0
	for _, p := range pairs {
		if p.Freq >= 64 {
			pairs[high] = p
			high++
		} else if seen&(1<<p.Freq) == 0 || p.Len < shortest[p.Freq] {
			shortest[p.Freq] = p.Len
			seen |= 1 << p.Freq
		}
	}
	slices.SortFunc(pairs[:high], func(a, b Pair) int {
		if a.Freq != b.Freq {
			return cmp.Compare(b.Freq, a.Freq)
		}
		return cmp.Compare(a.Len, b.Len)
	})
	out := pairs[:0]
	keep := func(p Pair) {
		if len(out) == 0 || p.Len < out[len(out)-1].Len {
			out = append(out, p)
		}
	}
	for _, p := range pairs[:high] {
		keep(p)
	}
	for f := 63; f > 0; f-- {
		if seen&(1<<f) != 0 {
			keep(Pair{Freq: uint32(f), Len: shortest[f]})
		}
	}
	// out falls in frequency and in length; join neighbours in even groups.
	if n := len(out); n > MaxPairs {
		for g := range MaxPairs {
			first, last := g*n/MaxPairs, (g+1)*n/MaxPairs-1
			out[g] = Pair{Freq: out[first].Freq, Len: out[last].Len}
		}
		out = out[:MaxPairs]
	}
	return out
}

// appendBound appends the pairs of each field.
func appendBound(b []byte, pairs *[Fields][]Pair) []byte {
	for _, ps := range pairs {
		b = binary.AppendUvarint(b, uint64(len(ps)))
		for _, p := range ps {
			b = binary.AppendUvarint(b, uint64(p.Freq))
			b = binary.AppendUvarint(b, uint64(p.Len))
		}
	}
	return b
}
