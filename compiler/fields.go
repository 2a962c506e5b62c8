package compiler

import (
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
type fieldBuilder struct {
	an    *artifact.Analyzer
	seen  map[string]int // term -> index in the field's terms
	arena []byte
}

func newFieldBuilder(a artifact.Analysis) *fieldBuilder {
	return &fieldBuilder{an: artifact.NewAnalyzer(a), seen: make(map[string]int)}
}

// grow makes room for n more bytes of terms without moving earlier ones.
func (b *fieldBuilder) grow(n int) {
	if len(b.arena)+n > cap(b.arena) {
		b.arena = make([]byte, 0, max(n, 64<<10))
	}
}

// text returns an analyzed text field; value must not change afterwards.
func (b *fieldBuilder) text(name string, value []byte, store bool) *indexField {
	f := &indexField{name: name, value: value, index: true, store: store}
	clear(b.seen)
	b.an.Terms(value, func(term []byte, _, _ int) {
		f.length++
		if i, ok := b.seen[string(term)]; ok {
			f.terms[i].freq++
			return
		}
		b.grow(len(term))
		b.arena = append(b.arena, term...)
		t := b.arena[len(b.arena)-len(term):]
		b.seen[string(t)] = len(f.terms)
		f.terms = append(f.terms, fieldTerm{term: t, freq: 1})
	})
	return f
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
