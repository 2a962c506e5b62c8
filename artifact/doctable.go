package artifact

//go:generate go run ./internal/gendoctable

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"time"
	"unsafe"
)

// The document table lists an index's documents: a file of the index
// directory (DocumentsFile) beside its segments, postings and vectors,
// whose SHA-256 the manifest records (Manifest.DocumentsSHA256). What a
// build may change without changing the index, each document's age, lives
// in the ages table instead and is joined in by ReadDocuments.
//
// Layout: documentsMagic, then uvarint n and n documents as
// tableWriter.document writes them (doctable_gen.go, generated from
// Document), then uvarint a and a attachment paths. Strings are a uvarint
// length and their bytes; integers varints; a *float64 a byte saying
// whether it is set and 8 bytes little-endian; a map its size and its
// pairs, sorted by key.
const DocumentsFile = "documents"

// tableWriter appends the document table's values, of a table of
// version (3 for documentsMagic, 2 for documentsMagicV2, 1 for
// documentsMagicV1), to b.
type tableWriter struct {
	b       []byte
	version int
}

func (w *tableWriter) uint(v uint64) { w.b = binary.AppendUvarint(w.b, v) }
func (w *tableWriter) int(v int64)   { w.b = binary.AppendVarint(w.b, v) }
func (w *tableWriter) str(s string)  { w.uint(uint64(len(s))); w.b = append(w.b, s...) }

func (w *tableWriter) bool(v bool) {
	if v {
		w.b = append(w.b, 1)
	} else {
		w.b = append(w.b, 0)
	}
}

func (w *tableWriter) strs(ss []string) {
	w.uint(uint64(len(ss)))
	for _, s := range ss {
		w.str(s)
	}
}

func (w *tableWriter) uints(vs []uint32) {
	w.uint(uint64(len(vs)))
	for _, v := range vs {
		w.uint(uint64(v))
	}
}

func (w *tableWriter) optFloat(f *float64) {
	w.bool(f != nil)
	if f != nil {
		w.b = binary.LittleEndian.AppendUint64(w.b, math.Float64bits(*f))
	}
}

func (w *tableWriter) strMap(m map[string]string) {
	w.uint(uint64(len(m)))
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		w.str(k)
		w.str(m[k])
	}
}

func (w *tableWriter) fields(f *DocFields) {
	for _, s := range f {
		w.uint(s.Docs)
		w.uint(s.Tokens)
	}
}

// tableReader reads a document table. A value that runs past the end, or
// is out of range, sets bad and reads as zero from then on. Strings point
// into data, which must not change: copying them took a third of the time
// of reading a table.
type tableReader struct {
	data    []byte
	i       int
	bad     bool
	version int // of the table: 1 for KBQDOC01
}

func (r *tableReader) uint() uint64 {
	v, n := binary.Uvarint(r.data[r.i:])
	if n <= 0 {
		r.fail()
		return 0
	}
	r.i += n
	return v
}

func (r *tableReader) int() int64 {
	v, n := binary.Varint(r.data[r.i:])
	if n <= 0 {
		r.fail()
		return 0
	}
	r.i += n
	return v
}

func (r *tableReader) uint32() uint32 {
	v := r.uint()
	if v > math.MaxUint32 {
		r.fail()
		return 0
	}
	return uint32(v)
}

// count reads a number of items that each take at least one byte.
func (r *tableReader) count() int {
	n := r.uint()
	if n > uint64(len(r.data)-r.i) {
		r.fail()
		return 0
	}
	return int(n)
}

func (r *tableReader) bytes(n int) []byte {
	if n > len(r.data)-r.i {
		r.fail()
		return nil
	}
	b := r.data[r.i : r.i+n : r.i+n]
	r.i += n
	return b
}

func (r *tableReader) str() string {
	b := r.bytes(r.count())
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

func (r *tableReader) bool() bool {
	b := r.bytes(1)
	return len(b) == 1 && b[0] != 0
}

func (r *tableReader) strs() []string {
	n := r.count()
	if n == 0 {
		return nil
	}
	ss := make([]string, n)
	for i := range ss {
		ss[i] = r.str()
	}
	return ss
}

func (r *tableReader) uints() []uint32 {
	n := r.count()
	if n == 0 {
		return nil
	}
	vs := make([]uint32, n)
	for i := range vs {
		vs[i] = r.uint32()
	}
	return vs
}

func (r *tableReader) optFloat() *float64 {
	if !r.bool() {
		return nil
	}
	b := r.bytes(8)
	if len(b) < 8 {
		return nil
	}
	f := math.Float64frombits(binary.LittleEndian.Uint64(b))
	return &f
}

func (r *tableReader) strMap() map[string]string {
	n := r.count()
	if n == 0 {
		return nil
	}
	m := make(map[string]string, n)
	for range n {
		k := r.str()
		m[k] = r.str()
	}
	return m
}

func (r *tableReader) fields(f *DocFields) {
	for i := range f {
		f[i] = FieldStats{Docs: r.uint(), Tokens: r.uint()}
	}
}

func (r *tableReader) fail() {
	r.bad = true
	r.i = len(r.data)
}

// EncodeDocuments returns the document table of docs and attachments.
func EncodeDocuments(docs []Document, attachments []string) []byte {
	return encodeDocuments(docs, attachments, 3)
}

// encodeDocuments writes a table of version: an older one for the tests
// that read it.
func encodeDocuments(docs []Document, attachments []string, version int) []byte {
	w := tableWriter{b: make([]byte, 0, 64+len(docs)*160), version: version}
	switch version {
	case 1:
		w.b = append(w.b, documentsMagicV1...)
	case 2:
		w.b = append(w.b, documentsMagicV2...)
	default:
		w.b = append(w.b, documentsMagic...)
	}
	w.uint(uint64(len(docs)))
	for i := range docs {
		w.document(&docs[i])
	}
	w.strs(attachments)
	return w.b
}

// DecodeDocuments reads a document table.
func DecodeDocuments(data []byte) (docs []Document, attachments []string, err error) {
	version := 0
	if len(data) >= len(documentsMagic) {
		switch string(data[:len(documentsMagic)]) {
		case documentsMagic:
			version = 3
		case documentsMagicV2:
			version = 2
		case documentsMagicV1:
			version = 1
		}
	}
	if version == 0 {
		return nil, nil, fmt.Errorf("%w: not a kbq document table", ErrCorrupt)
	}
	r := tableReader{data: data, i: len(documentsMagic), version: version}
	n := r.count()
	docs = make([]Document, n)
	for i := range docs {
		r.document(&docs[i])
	}
	attachments = r.strs()
	if r.bad || r.i != len(data) {
		return nil, nil, fmt.Errorf("%w: the document table is damaged", ErrCorrupt)
	}
	return docs, attachments, nil
}

// DocumentTable returns the document table of m, to be written into its
// index directory as DocumentsFile, and records its checksum in m.
func (m *Manifest) DocumentTable() []byte {
	data := EncodeDocuments(m.Documents, m.Attachments)
	sum := sha256.Sum256(data)
	m.DocumentsSHA256 = hex.EncodeToString(sum[:])
	return data
}

// ReadDocuments reads the documents of m, an artifact in dir: its index's
// document table, checked against the manifest, with each document's age
// from the ages table.
func ReadDocuments(dir string, m *Manifest) (docs []Document, attachments []string, err error) {
	indexDir, err := m.IndexDir(dir)
	if err != nil {
		return nil, nil, err
	}
	data, err := os.ReadFile(filepath.Join(indexDir, DocumentsFile))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil, fmt.Errorf("%w: index %s has no document table", ErrCorrupt, m.Index)
		}
		return nil, nil, err
	}
	sum := sha256.Sum256(data)
	if hex.EncodeToString(sum[:]) != m.DocumentsSHA256 {
		return nil, nil, fmt.Errorf("%w: the document table of index %s does not match the manifest's checksum (the file was changed or damaged)", ErrCorrupt, m.Index)
	}
	if docs, attachments, err = DecodeDocuments(data); err != nil {
		return nil, nil, err
	}
	if m.Ages != "" {
		if err := joinAges(filepath.Join(dir, m.Ages), docs); err != nil {
			return nil, nil, err
		}
	}
	return docs, attachments, nil
}

// joinAges sets each document's age from the ages table in file.
func joinAges(file string, docs []Document) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return fmt.Errorf("%w: the ages table: %w", ErrCorrupt, err)
	}
	ages, err := ParseAges(data)
	if err != nil {
		return err
	}
	for i := range docs {
		d := &docs[i]
		if age, ok := ages.Lookup(d.Path); ok {
			d.Commit, d.Author, d.Uncommitted = age.Commit, age.Author, age.Uncommitted
			if !age.Updated.IsZero() {
				d.Updated = age.Updated.Format(time.RFC3339)
			}
		}
	}
	return nil
}
