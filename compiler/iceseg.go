package compiler

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"slices"

	"github.com/RoaringBitmap/roaring"
	"github.com/blevesearch/vellum"
	segment "github.com/blugelabs/bluge_segment_api"
	"github.com/blugelabs/ice"
	"github.com/golang/snappy"
)

// writeIceSegment writes docs as an ice segment: the bytes ice.New and
// the segment's WriteTo write, to the byte (TestIceSegmentMatchesIce).
//
// Ice builds a segment through maps of every field of every document and
// of every term, then copies the whole segment from memory to the file:
// a fifth of the CPU of a build of the PowerShell docs, and 155 MB of the
// 526 MB it allocated. A build's documents need less: their fields are
// stored values and keywords, without doc values or term locations, so
// the segment is written as it is encoded, from buffers reused across
// documents and fields.
func writeIceSegment(out io.Writer, docs []segment.Document) error {
	if len(docs) == 0 {
		return writeWithIce(out, docs) // a batch of empty documents
	}
	w := &iceWriter{docs: make([]indexDoc, len(docs)), out: out}
	for i, d := range docs {
		id, ok := d.(indexDoc)
		if !ok {
			return fmt.Errorf("document %d is a %T, not an index document", i, d)
		}
		w.docs[i] = id
	}
	return w.segment()
}

// writeWithIce writes docs as an ice segment with ice's own writer.
func writeWithIce(out io.Writer, docs []segment.Document) error {
	seg, _, err := ice.New(docs, normCalc)
	if err != nil {
		return err
	}
	_, err = seg.(*ice.Segment).WriteTo(out, nil)
	return err
}

// iceIDField is the field ice defines first, number 0, in every segment.
const iceIDField = "_id"

// Ice's segment constants, as its writer sets them (ice v1.0.0).
const (
	iceChunkModeV1     = 1025 // its default chunk mode
	iceLegacyChunkSize = 1024 // the int coders' first chunk size
	iceMaxScan         = 1024 // docs a chunk holds at most, in mode V1
	iceNotUninverted   = math.MaxUint64
)

// iceWriter writes one segment; the offsets it records are counted from
// the segment's start, and the CRC covers every byte before the footer's.
type iceWriter struct {
	docs []indexDoc
	out  io.Writer
	n    uint64
	crc  uint32
	err  error

	names  []string          // by field number: _id, then sorted names
	number map[string]uint16 // field name → number
	fields []iceField        // by field number
	seen   []bool            // by field number, for the document at hand
	lens   []int             // by field number, for the document at hand
	buf    []byte            // numbers before they are written
}

// iceField is what a segment records of a field: how many documents
// have it, its terms' total count, and its terms with their postings.
type iceField struct {
	docs, freqs uint64
	terms       map[string]int // term → index in postings
	postings    []icePostings
	dict        uint64 // offset of its dictionary
}

// icePostings are a term's documents, in order, with its frequency and
// its field's norm in each.
type icePostings struct {
	term  string
	docs  []uint32
	freqs []uint64 // ice's frequency, shifted left by one (no locations)
	norms []uint32 // float32 bits
}

func (w *iceWriter) put(p []byte) {
	if w.err != nil {
		return
	}
	_, w.err = w.out.Write(p)
	w.crc = crc32.Update(w.crc, crc32.IEEETable, p)
	w.n += uint64(len(p))
}

func (w *iceWriter) uvarints(vals ...uint64) {
	w.buf = w.buf[:0]
	for _, v := range vals {
		w.buf = binary.AppendUvarint(w.buf, v)
	}
	w.put(w.buf)
}

func (w *iceWriter) bigEndian(v uint64) {
	w.buf = binary.BigEndian.AppendUint64(w.buf[:0], v)
	w.put(w.buf)
}

// segment writes the segment: stored fields, dictionaries with postings,
// the (empty) doc values index, the fields and the footer.
func (w *iceWriter) segment() error {
	w.defineFields()
	storedIndex := w.writeStored()
	w.collectTerms()
	docValues := w.writeDicts()
	fieldsIndex := w.writeFields()
	// The footer: its last four bytes are the CRC of all before them.
	for _, v := range []uint64{uint64(len(w.docs)), storedIndex, fieldsIndex, docValues} {
		w.bigEndian(v)
	}
	w.buf = binary.BigEndian.AppendUint32(w.buf[:0], iceChunkModeV1)
	w.buf = binary.BigEndian.AppendUint32(w.buf, ice.Version)
	w.put(w.buf)
	w.buf = binary.BigEndian.AppendUint32(w.buf[:0], w.crc)
	w.put(w.buf)
	return w.err
}

// defineFields numbers the fields as ice does: _id first, then the
// names of every document's fields, sorted.
func (w *iceWriter) defineFields() {
	w.number = map[string]uint16{iceIDField: 0}
	w.names = []string{iceIDField}
	for _, d := range w.docs {
		for _, f := range d {
			if _, ok := w.number[f.name]; !ok {
				w.number[f.name] = 0
				w.names = append(w.names, f.name)
			}
		}
	}
	slices.Sort(w.names[1:])
	for i, name := range w.names {
		w.number[name] = uint16(i)
	}
	w.fields = make([]iceField, len(w.names))
	w.seen = make([]bool, len(w.names))
	w.lens = make([]int, len(w.names))
}

// storedValue is a stored value of a document's field.
type storedValue struct {
	field uint16
	value []byte
}

// writeStored writes each document's stored values, in field order, as
// ice does: the varints of their fields, offsets and lengths, then the
// values snappy-compressed. It returns the offset of the index of the
// documents' offsets that follows them.
func (w *iceWriter) writeStored() uint64 {
	offsets := make([]uint64, len(w.docs))
	var vals []storedValue
	var meta, data, compressed []byte
	for i, d := range w.docs {
		vals = vals[:0]
		seen := w.seen
		for _, f := range d {
			n := w.number[f.name]
			fd := &w.fields[n]
			if !seen[n] {
				// Counted once a document, however often it names it.
				seen[n] = true
				fd.docs++
			}
			fd.freqs += uint64(f.length)
			if f.store {
				vals = append(vals, storedValue{n, f.value})
			}
		}
		clear(seen)
		// A field's values keep the order they came in.
		slices.SortStableFunc(vals, func(a, b storedValue) int { return cmp.Compare(a.field, b.field) })
		meta, data = meta[:0], data[:0]
		for _, v := range vals {
			meta = binary.AppendUvarint(meta, uint64(v.field))
			meta = binary.AppendUvarint(meta, uint64(len(data)))
			meta = binary.AppendUvarint(meta, uint64(len(v.value)))
			data = append(data, v.value...)
		}
		compressed = snappy.Encode(compressed[:cap(compressed)], data)
		offsets[i] = w.n
		w.uvarints(uint64(len(meta)), uint64(len(compressed)))
		w.put(meta)
		w.put(compressed)
	}
	index := w.n
	for _, off := range offsets {
		w.bigEndian(off)
	}
	return index
}

// collectTerms gathers each field's terms and their postings, documents
// in order: a term's frequencies in a document add up, and its norm is
// that of the field's length in the document, as ice counts them.
func (w *iceWriter) collectTerms() {
	for i, d := range w.docs {
		for _, f := range d {
			w.lens[w.number[f.name]] += f.length
		}
		for _, f := range d {
			if len(f.terms) == 0 {
				continue
			}
			n := w.number[f.name]
			fd := &w.fields[n]
			if fd.terms == nil {
				fd.terms = make(map[string]int)
			}
			norm := math.Float32bits(normCalc(f.name, w.lens[n]))
			for _, t := range f.terms {
				k, ok := fd.terms[string(t.term)]
				if !ok {
					k = len(fd.postings)
					fd.terms[string(t.term)] = k
					fd.postings = append(fd.postings, icePostings{term: string(t.term)})
				}
				p := &fd.postings[k]
				if last := len(p.docs) - 1; last >= 0 && p.docs[last] == uint32(i) {
					p.freqs[last] += uint64(t.freq) << 1
					continue
				}
				p.docs = append(p.docs, uint32(i))
				p.freqs = append(p.freqs, uint64(t.freq)<<1)
				p.norms = append(p.norms, norm)
			}
		}
		clear(w.lens)
	}
}

// writeDicts writes each field's postings, term by term in order, and
// the dictionary that finds them; no field has doc values. It returns the
// offset of the doc values index, which says so of every field.
func (w *iceWriter) writeDicts() uint64 {
	numDocs := uint64(len(w.docs))
	tf := newIceIntCoder(iceLegacyChunkSize, numDocs-1)
	loc := newIceIntCoder(iceLegacyChunkSize, numDocs-1)
	bits := roaring.New()
	var dict bytes.Buffer
	builder, err := vellum.New(&dict, nil)
	if err != nil {
		w.err = err
		return 0
	}
	for n := range w.fields {
		fd := &w.fields[n]
		slices.SortFunc(fd.postings, func(a, b icePostings) int { return cmp.Compare(a.term, b.term) })
		for _, p := range fd.postings {
			chunk := numDocs / (uint64(len(p.docs))/iceMaxScan + 1)
			tf.setChunkSize(chunk, numDocs-1)
			loc.setChunkSize(chunk, numDocs-1)
			bits.Clear()
			for j, doc := range p.docs {
				bits.Add(doc)
				tf.add(uint64(doc), p.freqs[j], uint64(p.norms[j]))
			}
			tf.close()
			loc.close()
			tfOffset := tf.writeAt(w)
			locOffset := loc.writeAt(w)
			postingsOffset := w.n
			w.uvarints(tfOffset, locOffset)
			roaringBytes, err := bits.ToBytes()
			if err != nil && w.err == nil {
				w.err = err
			}
			w.uvarints(uint64(len(roaringBytes)))
			w.put(roaringBytes)
			if postingsOffset > 0 && w.err == nil {
				w.err = builder.Insert([]byte(p.term), postingsOffset)
			}
			tf.reset()
			loc.reset()
		}
		if err := builder.Close(); err != nil && w.err == nil {
			w.err = err
		}
		fd.dict = w.n
		w.uvarints(uint64(dict.Len()))
		w.put(dict.Bytes())
		dict.Reset()
		if err := builder.Reset(&dict); err != nil && w.err == nil {
			w.err = err
		}
	}
	index := w.n
	for range w.fields {
		w.uvarints(iceNotUninverted, iceNotUninverted)
	}
	return index
}

// writeFields writes each field's dictionary offset, name and counts,
// then the index of where each starts, which it returns the offset of.
func (w *iceWriter) writeFields() uint64 {
	offsets := make([]uint64, len(w.fields))
	for n, name := range w.names {
		fd := &w.fields[n]
		offsets[n] = w.n
		w.uvarints(fd.dict, uint64(len(name)))
		w.put([]byte(name))
		w.uvarints(fd.docs, fd.freqs)
	}
	index := w.n
	for _, off := range offsets {
		w.bigEndian(off)
	}
	return index
}

// iceIntCoder is ice's chunked integer coder: the numbers of each chunk
// of documents, as uvarints, behind the chunks' end offsets. Its chunk
// lengths are reused from term to term as ice's are, which the bytes it
// writes depend on.
type iceIntCoder struct {
	final     []byte
	chunkSize uint64
	chunk     []byte
	chunkLens []uint64
	currChunk uint64
}

func newIceIntCoder(chunkSize, maxDoc uint64) *iceIntCoder {
	return &iceIntCoder{chunkSize: chunkSize, chunkLens: make([]uint64, maxDoc/chunkSize+1)}
}

func (c *iceIntCoder) reset() {
	c.final = c.final[:0]
	c.chunk = c.chunk[:0]
	c.currChunk = 0
	clear(c.chunkLens)
}

func (c *iceIntCoder) setChunkSize(chunkSize, maxDoc uint64) {
	total := int(maxDoc/chunkSize + 1)
	c.chunkSize = chunkSize
	if cap(c.chunkLens) < total {
		c.chunkLens = make([]uint64, total)
	} else {
		c.chunkLens = c.chunkLens[:total]
	}
}

func (c *iceIntCoder) add(doc uint64, vals ...uint64) {
	if chunk := doc / c.chunkSize; chunk != c.currChunk {
		c.close()
		c.chunk = c.chunk[:0]
		c.currChunk = chunk
	}
	for _, v := range vals {
		c.chunk = binary.AppendUvarint(c.chunk, v)
	}
}

func (c *iceIntCoder) close() {
	c.chunkLens[c.currChunk] = uint64(len(c.chunk))
	c.final = append(c.final, c.chunk...)
	c.currChunk = uint64(cap(c.chunkLens))
}

// writeAt writes the coder's chunks and returns their offset, or 0 when
// it holds none.
func (c *iceIntCoder) writeAt(w *iceWriter) uint64 {
	if len(c.final) == 0 {
		return 0
	}
	start := w.n
	var end uint64
	for i, n := range c.chunkLens {
		end += n
		c.chunkLens[i] = end
	}
	w.buf = binary.AppendUvarint(w.buf[:0], uint64(len(c.chunkLens)))
	for _, off := range c.chunkLens {
		w.buf = binary.AppendUvarint(w.buf, off)
	}
	w.put(w.buf)
	w.put(c.final)
	return start
}
