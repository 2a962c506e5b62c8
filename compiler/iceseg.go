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
// the segment is encoded from buffers reused across documents and
// fields, and written as it is.
func writeIceSegment(out io.Writer, docs []segment.Document) error {
	if len(docs) == 0 {
		return writeWithIce(out, docs) // a batch of empty documents
	}
	ids, err := indexDocs(docs)
	if err != nil {
		return err
	}
	return writeIceParts(out, []*icePart{newIcePart(ids)})
}

// indexDocs returns docs as the index documents a build makes.
func indexDocs(docs []segment.Document) ([]indexDoc, error) {
	ids := make([]indexDoc, len(docs))
	for i, d := range docs {
		id, ok := d.(indexDoc)
		if !ok {
			return nil, fmt.Errorf("document %d is a %T, not an index document", i, d)
		}
		ids[i] = id
	}
	return ids, nil
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

// An icePart is consecutive documents of a segment, encoded as far as
// they can be before the segment's other documents are known: their
// stored records (each document's values snappy-compressed), and each
// field's counts and keyword postings. writeIceParts writes parts, in
// order, as the segment of all their documents that ice would write; a
// build encodes its batches' parts in parallel, and writes a segment of
// several batches without merging segments.
type icePart struct {
	docs    int
	names   []string           // by field number: _id, then its documents' field names, sorted
	fields  []iceField         // by field number
	records [][]byte           // the stored records, one after another, in blocks of whole records
	offsets []uint64           // by document: where its record starts, counted across the blocks
	src     []segment.Document // the documents, when tests compare (partDocs)
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

// newIcePart encodes docs.
func newIcePart(docs []indexDoc) *icePart {
	p := &icePart{docs: len(docs)}
	number := p.defineFields(docs)
	p.encodeStored(docs, number)
	p.collectTerms(docs, number)
	return p
}

// defineFields numbers the fields as ice does: _id first, then the
// names of every document's fields, sorted.
func (p *icePart) defineFields(docs []indexDoc) map[string]uint16 {
	number := map[string]uint16{iceIDField: 0}
	p.names = []string{iceIDField}
	for _, d := range docs {
		for _, f := range d {
			if _, ok := number[f.name]; !ok {
				number[f.name] = 0
				p.names = append(p.names, f.name)
			}
		}
	}
	slices.Sort(p.names[1:])
	for i, name := range p.names {
		number[name] = uint16(i)
	}
	p.fields = make([]iceField, len(p.names))
	return number
}

// storedValue is a stored value of a document's field.
type storedValue struct {
	field uint16
	value []byte
}

// encodeStored encodes each document's stored values, in field order, as
// ice does: the varints of their lengths, then of their fields, offsets
// and lengths, then the values snappy-compressed; and counts the
// documents that have each field and its length in all.
func (p *icePart) encodeStored(docs []indexDoc, number map[string]uint16) {
	p.offsets = make([]uint64, len(docs))
	seen := make([]bool, len(p.names))
	var vals []storedValue
	var meta, data, compressed, block []byte
	var size uint64
	for i, d := range docs {
		vals = vals[:0]
		for _, f := range d {
			n := number[f.name]
			fd := &p.fields[n]
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
		p.offsets[i] = size
		need := 2*binary.MaxVarintLen64 + len(meta) + len(compressed)
		if block == nil || cap(block)-len(block) < need {
			if block != nil {
				p.records = append(p.records, block)
			}
			block = make([]byte, 0, max(recordBlock, need))
		}
		at := len(block)
		block = binary.AppendUvarint(block, uint64(len(meta)))
		block = binary.AppendUvarint(block, uint64(len(compressed)))
		block = append(block, meta...)
		block = append(block, compressed...)
		size += uint64(len(block) - at)
	}
	if block != nil {
		p.records = append(p.records, block)
	}
}

// recordBlock is the size of the blocks a part's stored records are kept
// in: one growing buffer was copied as it grew, a twentieth of a build's
// CPU.
var recordBlock = 1 << 20

// collectTerms gathers each field's terms and their postings, documents
// in order: a term's frequencies in a document add up, and its norm is
// that of the field's length in the document, as ice counts them.
func (p *icePart) collectTerms(docs []indexDoc, number map[string]uint16) {
	lens := make([]int, len(p.names))
	for i, d := range docs {
		for _, f := range d {
			lens[number[f.name]] += f.length
		}
		for _, f := range d {
			if len(f.terms) == 0 {
				continue
			}
			n := number[f.name]
			fd := &p.fields[n]
			if fd.terms == nil {
				fd.terms = make(map[string]int)
			}
			norm := math.Float32bits(normCalc(f.name, lens[n]))
			for _, t := range f.terms {
				k, ok := fd.terms[string(t.term)]
				if !ok {
					k = len(fd.postings)
					fd.terms[string(t.term)] = k
					fd.postings = append(fd.postings, icePostings{term: string(t.term)})
				}
				tp := &fd.postings[k]
				if last := len(tp.docs) - 1; last >= 0 && tp.docs[last] == uint32(i) {
					tp.freqs[last] += uint64(t.freq) << 1
					continue
				}
				tp.docs = append(tp.docs, uint32(i))
				tp.freqs = append(tp.freqs, uint64(t.freq)<<1)
				tp.norms = append(tp.norms, norm)
			}
		}
		clear(lens)
	}
}

// writeIceParts writes the segment of parts' documents, in order: the
// stored records, dictionaries with postings, the (empty) doc values
// index, the fields and the footer.
func writeIceParts(out io.Writer, parts []*icePart) error {
	w := &iceWriter{out: out}
	w.join(parts)
	storedIndex := w.writeStored(parts)
	docValues := w.writeDicts()
	fieldsIndex := w.writeFields()
	// The footer: its last four bytes are the CRC of all before them.
	for _, v := range []uint64{w.docs, storedIndex, fieldsIndex, docValues} {
		w.bigEndian(v)
	}
	w.buf = binary.BigEndian.AppendUint32(w.buf[:0], iceChunkModeV1)
	w.buf = binary.BigEndian.AppendUint32(w.buf, ice.Version)
	w.put(w.buf)
	w.buf = binary.BigEndian.AppendUint32(w.buf[:0], w.crc)
	w.put(w.buf)
	return w.err
}

// iceWriter writes one segment; the offsets it records are counted from
// the segment's start, and the CRC covers every byte before the footer's.
type iceWriter struct {
	out  io.Writer
	n    uint64
	crc  uint32
	err  error
	docs uint64

	names  []string   // by field number: _id, then sorted names
	fields []iceField // by field number
	remap  [][]uint16 // by part, its field numbers' in the segment
	buf    []byte     // numbers before they are written
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

// join numbers the fields of all parts as ice does, and gathers each
// field's counts and postings, the documents of later parts numbered
// after the earlier parts'.
func (w *iceWriter) join(parts []*icePart) {
	if len(parts) == 1 {
		p := parts[0]
		w.names, w.fields, w.docs = p.names, p.fields, uint64(p.docs)
		w.remap = [][]uint16{nil}
		return
	}
	number := map[string]uint16{iceIDField: 0}
	w.names = []string{iceIDField}
	for _, p := range parts {
		for _, name := range p.names {
			if _, ok := number[name]; !ok {
				number[name] = 0
				w.names = append(w.names, name)
			}
		}
	}
	slices.Sort(w.names[1:])
	for i, name := range w.names {
		number[name] = uint16(i)
	}
	w.fields = make([]iceField, len(w.names))
	w.remap = make([][]uint16, len(parts))
	for pi, p := range parts {
		remap := make([]uint16, len(p.names))
		for l, name := range p.names {
			remap[l] = number[name]
		}
		w.remap[pi] = remap
		base := uint32(w.docs)
		for l := range p.fields {
			from, to := &p.fields[l], &w.fields[remap[l]]
			to.docs += from.docs
			to.freqs += from.freqs
			for _, tp := range from.postings {
				if to.terms == nil {
					to.terms = make(map[string]int)
				}
				k, ok := to.terms[tp.term]
				if !ok {
					k = len(to.postings)
					to.terms[tp.term] = k
					to.postings = append(to.postings, icePostings{term: tp.term})
				}
				dst := &to.postings[k]
				for _, d := range tp.docs {
					dst.docs = append(dst.docs, base+d)
				}
				dst.freqs = append(dst.freqs, tp.freqs...)
				dst.norms = append(dst.norms, tp.norms...)
			}
		}
		w.docs += uint64(p.docs)
	}
}

// writeStored writes the parts' stored records, their fields renumbered
// where the segment numbers them otherwise, then the index of where each
// starts, whose offset it returns.
func (w *iceWriter) writeStored(parts []*icePart) uint64 {
	starts := make([]uint64, 0, w.docs)
	var meta []byte
	for pi, p := range parts {
		remap := w.remap[pi]
		if remap == nil || identity(remap) {
			for _, off := range p.offsets {
				starts = append(starts, w.n+off)
			}
			for _, block := range p.records {
				w.put(block)
			}
			continue
		}
		for _, block := range p.records {
			for len(block) > 0 {
				metaLen, k1 := binary.Uvarint(block)
				dataLen, k2 := binary.Uvarint(block[k1:])
				head := k1 + k2
				old, data := block[head:head+int(metaLen)], block[head+int(metaLen):head+int(metaLen)+int(dataLen)]
				block = block[head+int(metaLen)+int(dataLen):]
				meta = meta[:0]
				for pos := 0; pos < len(old); {
					field, a := binary.Uvarint(old[pos:])
					pos += a
					meta = binary.AppendUvarint(meta, uint64(remap[field]))
					for range 2 { // offset and length
						v, b := binary.Uvarint(old[pos:])
						pos += b
						meta = binary.AppendUvarint(meta, v)
					}
				}
				starts = append(starts, w.n)
				w.uvarints(uint64(len(meta)), dataLen)
				w.put(meta)
				w.put(data)
			}
		}
	}
	index := w.n
	for _, off := range starts {
		w.bigEndian(off)
	}
	return index
}

// identity reports whether remap numbers every field as it was.
func identity(remap []uint16) bool {
	for i, n := range remap {
		if int(n) != i {
			return false
		}
	}
	return true
}

// writeDicts writes each field's postings, term by term in order, and
// the dictionary that finds them; no field has doc values. It returns the
// offset of the doc values index, which says so of every field.
func (w *iceWriter) writeDicts() uint64 {
	numDocs := w.docs
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
