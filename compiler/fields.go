package compiler

import (
	"math"

	segment "github.com/blugelabs/bluge_segment_api"

	"github.com/kbqdev/kbq/artifact"
)

// The segment builder reads documents through bluge_segment_api's small
// interfaces. Bluge's own fields keep a map of term frequencies per field
// per document; indexField keeps the distinct terms in a slice instead,
// which takes a fraction of the memory and allocations on large builds.

// indexField is a field of an index document.
type indexField struct {
	name   string
	value  []byte // the stored value
	index  bool
	store  bool
	length int // number of terms, for the norm
	terms  []fieldTerm
}

func (f *indexField) Name() string         { return f.name }
func (f *indexField) Length() int          { return f.length }
func (f *indexField) Value() []byte        { return f.value }
func (f *indexField) Index() bool          { return f.index }
func (f *indexField) Store() bool          { return f.store }
func (f *indexField) IndexDocValues() bool { return false }

func (f *indexField) EachTerm(vt segment.VisitTerm) {
	for i := range f.terms {
		vt(&f.terms[i])
	}
}

// fieldTerm is a distinct term of a field and how often it occurs.
type fieldTerm struct {
	term []byte
	freq int
	id   int32 // in the fieldBuilder's vocabulary; 0 for keywords
}

func (t *fieldTerm) Term() []byte                       { return t.term }
func (t *fieldTerm) Frequency() int                     { return t.freq }
func (t *fieldTerm) EachLocation(segment.VisitLocation) {}

// indexDoc is an index document: one chunk.
type indexDoc []*indexField

// Analyze does nothing: fields are analyzed as they are built.
func (indexDoc) Analyze() {}

func (d indexDoc) EachField(vf segment.VisitField) {
	for _, f := range d {
		vf(f)
	}
}

// fieldBuilder builds fields; it is not safe for concurrent use.
//
// It keeps a vocabulary: every word it has seen, as written, maps to the id
// of its index term (or to -1, a stop word), so most words cost one map
// lookup: no lowercasing, stemming or second lookup to count the term in
// its field, which is done with arrays indexed by term id.
type fieldBuilder struct {
	an    *artifact.Analyzer
	words wordTable        // word as written → term id, -1 for none
	ids   map[string]int32 // index term → term id
	terms [][]byte         // by term id: the index term, in arena
	stamp []uint32         // by term id: the field that counted it last
	slot  []int32          // by term id: its index in that field's terms
	field uint32           // the field being built, for stamp
	arena []byte
	// heading and body are the terms of the chunk being indexed, reused
	// from chunk to chunk.
	heading, body []fieldTerm
	// A document with a limit indexes its first limit distinct terms, in
	// the order it is analyzed, and none after: docTerms counts them,
	// inDoc (by term id) marks them with the document's number doc.
	limit, docTerms int
	inDoc           []uint32
	doc             uint32
}

// startDocument starts a document; limit, when above 0, is the most
// distinct terms it indexes. Which ones depends on the document alone, not
// on what the builder learned before, so that every build indexes it alike.
func (b *fieldBuilder) startDocument(limit int) {
	b.limit, b.docTerms = limit, 0
	if b.doc == math.MaxUint32 {
		clear(b.inDoc)
		b.doc = 0
	}
	b.doc++
}

// full reports whether the document being indexed has all the terms its
// limit allows.
func (b *fieldBuilder) full() bool { return b.limit > 0 && b.docTerms >= b.limit }

// vocabularyLimit bounds the words a fieldBuilder remembers from one
// segment to the next (within one, its term ids stand for the same terms).
const vocabularyLimit = 1 << 18

func newFieldBuilder(a artifact.Analysis) *fieldBuilder {
	b := &fieldBuilder{an: artifact.NewAnalyzer(a)}
	b.reset()
	return b
}

// nextSegment forgets the vocabulary if it has grown past its limit; term
// ids stay the same until it is called again.
func (b *fieldBuilder) nextSegment() {
	if b.words.len() >= vocabularyLimit {
		b.reset()
	}
}

// reset forgets the vocabulary. Terms already handed out stay valid: the
// arena is only ever appended to.
func (b *fieldBuilder) reset() {
	b.words.reset()
	b.ids = make(map[string]int32)
	b.terms, b.stamp, b.slot, b.inDoc = b.terms[:0], b.stamp[:0], b.slot[:0], b.inDoc[:0]
	b.field = 0
}

// grow makes room for n more bytes of terms without moving earlier ones.
func (b *fieldBuilder) grow(n int) {
	if len(b.arena)+n > cap(b.arena) {
		b.arena = make([]byte, 0, max(n, 64<<10))
	}
}

// analyzed is a text field after analysis: its length in terms and its
// distinct terms, each with its frequency.
type analyzed struct {
	length int
	terms  []fieldTerm
}

// analyze analyzes a text field's value, appending its distinct terms to
// into (a chunk's body and heading are analyzed into the same memory chunk
// after chunk). The terms' bytes stay valid for good: the vocabulary's
// arena is only ever appended to.
func (b *fieldBuilder) analyze(value []byte, into []fieldTerm) analyzed {
	if b.field == math.MaxUint32 {
		clear(b.stamp)
		b.field = 0
	}
	b.field++
	f := analyzed{terms: into}
	artifact.Words(value, func(start, end int) {
		word := value[start:end]
		h := wordHash(value, start, end)
		id, ok := b.words.lookup(word, h)
		if !ok {
			id = b.learn(word, h)
		}
		if id < 0 {
			return
		}
		if b.limit > 0 && b.inDoc[id] != b.doc {
			if b.full() {
				return
			}
			b.inDoc[id] = b.doc
			b.docTerms++
		}
		f.length++
		if b.stamp[id] == b.field {
			f.terms[b.slot[id]].freq++
			return
		}
		b.stamp[id] = b.field
		b.slot[id] = int32(len(f.terms))
		f.terms = append(f.terms, fieldTerm{term: b.terms[id], freq: 1, id: id})
	})
	return f
}

// learn adds a word, hashed h, to the vocabulary and returns its term id.
func (b *fieldBuilder) learn(word []byte, h uint64) int32 {
	id := int32(-1)
	if term := b.an.Term(word); term != nil {
		var ok bool
		if id, ok = b.ids[string(term)]; !ok {
			if b.full() {
				return -1 // not indexed here, and not remembered: memory stays bounded
			}
			b.grow(len(term))
			b.arena = append(b.arena, term...)
			t := b.arena[len(b.arena)-len(term):]
			id = int32(len(b.terms))
			b.ids[string(t)] = id
			b.terms = append(b.terms, t)
			b.stamp = append(b.stamp, 0)
			b.slot = append(b.slot, 0)
			b.inDoc = append(b.inDoc, 0)
		}
	}
	b.words.add(word, h, id)
	return id
}

// keyword returns a field indexed as the given exact terms.
func keyword(name string, value []byte, store bool, terms ...[]byte) *indexField {
	f := &indexField{name: name, value: value, index: true, store: store, length: len(terms)}
	f.terms = make([]fieldTerm, len(terms))
	for i, t := range terms {
		f.terms[i] = fieldTerm{term: t, freq: 1}
	}
	return f
}

// stored returns a field that is stored and not indexed.
func stored(name string, value []byte) *indexField {
	return &indexField{name: name, value: value, store: true}
}
