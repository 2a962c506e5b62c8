// Package iceread reads the ice segments of an artifact as far as kbq's
// queries need them: the chunk count, the stored fields' names and
// offsets table, and the keyword fields' dictionaries and postings, as
// chunk numbers. Term frequencies, norms, locations and doc values, which
// the artifact's keyword fields do not use, are not read.
//
// Reading the format here rather than through ice itself keeps ice out of
// kbq: ice brings snappy, whose package initialization builds a CRC table
// in every process that links it, a twentieth of a one-shot kbq search.
// The compiler still writes and merges segments with ice, and the tests
// hold this reader to ice's on every field, term and chunk.
//
// The layout is ice v1's: the stored records, their offsets (a big-endian
// u64 per chunk), then per field its dictionary (a uvarint length and a
// vellum FST mapping each term to its postings) and postings, the fields'
// index (a big-endian u64 offset per field, each pointing at a uvarint
// dictionary offset, the field's name as a uvarint length and its bytes,
// and two uvarint counts) and a footer.
package iceread

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/RoaringBitmap/roaring"
	"github.com/blevesearch/vellum"
)

// Type and Version name the segment format read, as the artifact's
// snapshot records it; they are ice's own (TestConstantsAreIce).
const (
	Type    = "ice"
	Version = uint32(1)
)

// FooterLen is the length of a segment's footer: its chunk count, the
// offsets of its stored fields' index, fields' index and doc values (each
// a big-endian u64), then its chunk mode, version and CRC (each a
// big-endian u32).
const FooterLen = 44

// ErrCorrupt is wrapped by the errors of a segment that is not as written.
var ErrCorrupt = errors.New("corrupt ice segment")

// Segment is an ice segment, read from its bytes; safe for concurrent use.
type Segment struct {
	data        []byte // without the footer
	docs        uint64
	storedIndex uint64
	chunkMode   uint32
	fields      []string
	dicts       []*Dictionary // by field number; nil where there is none
	byName      map[string]int
}

// Load reads the segment in data, which it keeps.
func Load(data []byte) (*Segment, error) {
	if len(data) < FooterLen {
		return nil, fmt.Errorf("%w: %d bytes, less than a footer", ErrCorrupt, len(data))
	}
	be := binary.BigEndian
	foot := data[len(data)-FooterLen:]
	s := &Segment{
		data:        data[:len(data)-FooterLen],
		docs:        be.Uint64(foot),
		storedIndex: be.Uint64(foot[8:]),
		chunkMode:   be.Uint32(foot[32:]),
	}
	fieldsIndex := be.Uint64(foot[16:])
	if v := be.Uint32(foot[36:]); v != Version {
		return nil, fmt.Errorf("%w: version %d, not %d", ErrCorrupt, v, Version)
	}
	if s.chunkMode > chunkModeV1 {
		return nil, fmt.Errorf("%w: unknown chunk mode %d", ErrCorrupt, s.chunkMode)
	}
	end := uint64(len(s.data))
	if fieldsIndex > end {
		return nil, fmt.Errorf("%w: fields' index at %d of %d bytes", ErrCorrupt, fieldsIndex, end)
	}
	n := (end - fieldsIndex) / 8
	if (end-fieldsIndex)%8 != 0 || n > math.MaxUint16 {
		return nil, fmt.Errorf("%w: a fields' index of %d bytes", ErrCorrupt, end-fieldsIndex)
	}
	s.fields = make([]string, n)
	s.dicts = make([]*Dictionary, n)
	s.byName = make(map[string]int, n)
	for i := range s.fields {
		addr := be.Uint64(s.data[fieldsIndex+8*uint64(i):])
		dictAt, k := uvarint(s.data, addr)
		nameLen, k2 := uvarint(s.data, addr+uint64(max(k, 0)))
		at := addr + uint64(max(k, 0)+max(k2, 0))
		if k <= 0 || k2 <= 0 || nameLen > end || at > end-nameLen {
			return nil, fmt.Errorf("%w: field %d's entry at %d", ErrCorrupt, i, addr)
		}
		name := string(s.data[at : at+nameLen])
		s.fields[i] = name
		s.byName[name] = i
		if dictAt == 0 {
			continue
		}
		d, err := s.loadDictionary(dictAt)
		if err != nil {
			return nil, fmt.Errorf("%w: dictionary of field %q: %v", ErrCorrupt, name, err)
		}
		s.dicts[i] = d
	}
	return s, nil
}

const chunkModeV1 = 1025

// loadDictionary reads the dictionary at off: a uvarint length, then the
// FST.
func (s *Segment) loadDictionary(off uint64) (*Dictionary, error) {
	n, k := uvarint(s.data, off)
	start := off + uint64(max(k, 0))
	if k <= 0 || n > uint64(len(s.data)) || start > uint64(len(s.data))-n {
		return nil, fmt.Errorf("a dictionary of %d bytes at %d", n, off)
	}
	fst, err := vellum.Load(s.data[start : start+n])
	if err != nil {
		return nil, err
	}
	return &Dictionary{s: s, fst: fst}, nil
}

// Count returns the number of chunks in the segment.
func (s *Segment) Count() uint64 { return s.docs }

// Fields returns the names of the segment's fields, by number.
func (s *Segment) Fields() []string { return s.fields }

// StoredIndexOffset returns where the offsets of the chunks' stored
// records start.
func (s *Segment) StoredIndexOffset() uint64 { return s.storedIndex }

// Dictionary returns the dictionary of field; a field the segment does
// not have, or has no terms of, has an empty one.
func (s *Segment) Dictionary(field string) *Dictionary {
	if i, ok := s.byName[field]; ok && s.dicts[i] != nil {
		return s.dicts[i]
	}
	return &Dictionary{s: s}
}

// Dictionary is a keyword field's terms, each with its postings.
type Dictionary struct {
	s   *Segment
	fst *vellum.FST // nil: no terms
}

// A term's FST value is the offset of its postings, or the one chunk
// holding it once, with its norm, when the top bits are 10 (ice's "1-hit"
// encoding: 31 bits of norm above 31 bits of chunk number).
const (
	encodingMask = 0xc000000000000000
	encoding1Hit = 0x8000000000000000
	mask31       = 0x7fffffff
)

// Postings returns the chunks holding term, but for those in except (which
// may be nil).
func (d *Dictionary) Postings(term []byte, except *roaring.Bitmap) (Postings, error) {
	if d.fst == nil {
		return Postings{}, nil
	}
	v, ok, err := d.fst.Get(term)
	if err != nil {
		return Postings{}, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	if !ok {
		return Postings{}, nil
	}
	return d.postings(v, except)
}

func (d *Dictionary) postings(v uint64, except *roaring.Bitmap) (Postings, error) {
	p := Postings{except: except}
	if v&encodingMask == encoding1Hit {
		// As ice reads it: a norm of 0 bits leaves the list empty.
		p.one, p.hasOne = v&mask31, (v>>31)&mask31 != 0
		return p, nil
	}
	data := d.s.data
	_, k1 := uvarint(data, v) // the frequencies' offset
	_, k2 := uvarint(data, v+uint64(max(k1, 0)))
	n, k3 := uvarint(data, v+uint64(max(k1, 0)+max(k2, 0)))
	start := v + uint64(max(k1, 0)+max(k2, 0)+max(k3, 0))
	if k1 <= 0 || k2 <= 0 || k3 <= 0 || n > uint64(len(data)) || start > uint64(len(data))-n {
		return Postings{}, fmt.Errorf("%w: postings at %d", ErrCorrupt, v)
	}
	p.bits = roaring.NewBitmap()
	if _, err := p.bits.FromBuffer(data[start : start+n]); err != nil {
		return Postings{}, fmt.Errorf("%w: postings at %d: %v", ErrCorrupt, v, err)
	}
	return p, nil
}

// Terms returns an iterator over the dictionary's terms from start
// (inclusive) to end (exclusive; nil for no end), in order.
func (d *Dictionary) Terms(start, end []byte) *Terms {
	t := &Terms{d: d}
	if d.fst == nil {
		return t
	}
	it, err := d.fst.Iterator(start, end)
	switch {
	case err == nil:
		t.it = it
	case !errors.Is(err, vellum.ErrIteratorDone):
		t.err = fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	return t
}

// Terms iterates over a dictionary's terms.
type Terms struct {
	d     *Dictionary
	it    vellum.Iterator
	moved bool // it is on the term Next returned last
	err   error
	val   uint64
}

// Next returns the next term, valid until the next call, and false at
// the end or on an error, which Err then returns.
func (t *Terms) Next() ([]byte, bool) {
	if t.it == nil {
		return nil, false
	}
	if t.moved {
		if err := t.it.Next(); err != nil {
			t.it = nil
			if !errors.Is(err, vellum.ErrIteratorDone) {
				t.err = fmt.Errorf("%w: %v", ErrCorrupt, err)
			}
			return nil, false
		}
	}
	t.moved = true
	term, v := t.it.Current()
	t.val = v
	return term, true
}

// Postings returns the chunks holding the term Next returned last, but
// for those in except.
func (t *Terms) Postings(except *roaring.Bitmap) (Postings, error) {
	return t.d.postings(t.val, except)
}

// Err returns the error that ended the iteration, if any.
func (t *Terms) Err() error { return t.err }

// Postings are the chunks holding a term.
type Postings struct {
	bits   *roaring.Bitmap
	one    uint64 // the one chunk, when hasOne
	hasOne bool
	except *roaring.Bitmap
}

// Count returns the number of chunks.
func (p Postings) Count() uint64 {
	switch {
	case p.hasOne:
		if p.except != nil && p.one <= math.MaxUint32 && p.except.Contains(uint32(p.one)) {
			return 0
		}
		return 1
	case p.bits == nil:
		return 0
	case p.except != nil:
		return p.bits.GetCardinality() - p.bits.AndCardinality(p.except)
	}
	return p.bits.GetCardinality()
}

// Iterator returns an iterator over the chunks, in order.
func (p Postings) Iterator() *Iterator {
	it := &Iterator{one: p.one, hasOne: p.hasOne}
	if p.hasOne && p.except != nil && p.one <= math.MaxUint32 && p.except.Contains(uint32(p.one)) {
		it.hasOne = false
	}
	switch {
	case p.bits == nil:
	case p.except != nil:
		it.bits = roaring.AndNot(p.bits, p.except).Iterator()
	default:
		it.bits = p.bits.Iterator()
	}
	return it
}

// Iterator walks the chunks of Postings.
type Iterator struct {
	bits   roaring.IntPeekable
	one    uint64
	hasOne bool
}

// Next returns the next chunk, and false after the last.
func (it *Iterator) Next() (uint64, bool) {
	return it.Advance(0)
}

// Advance returns the first chunk at or after doc, and false when there
// is none.
func (it *Iterator) Advance(doc uint64) (uint64, bool) {
	if it.bits == nil {
		if !it.hasOne {
			return 0, false
		}
		it.hasOne = false // consumed, found or passed
		return it.one, it.one >= doc
	}
	if doc > math.MaxUint32 {
		return 0, false
	}
	it.bits.AdvanceIfNeeded(uint32(doc))
	if !it.bits.HasNext() {
		return 0, false
	}
	return uint64(it.bits.Next()), true
}

// uvarint decodes a uvarint at data[off:]; its length is 0 or less when
// there is none.
func uvarint(data []byte, off uint64) (uint64, int) {
	if off >= uint64(len(data)) {
		return 0, 0
	}
	return binary.Uvarint(data[off:])
}
