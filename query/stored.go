package query

import (
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"sync"

	segment "github.com/blugelabs/bluge_segment_api"

	"github.com/kbqdev/kbq/artifact"
	"github.com/kbqdev/kbq/artifact/iceread"
	"github.com/kbqdev/kbq/internal/plainread"
	"github.com/kbqdev/kbq/internal/unsnappy"
)

// storedReader reads the stored fields of a large ice segment with pread
// rather than through its mapping (a small one, mappedStored, through
// it). Each page fault on a mapping maps the pages around it too (the
// kernel's fault-around, which madvise does not turn off), so the few
// hundred bytes of a hit's fields cost 64 KiB of resident memory: a
// server at 30 copies of PowerShell-Docs grew by about 10 MB a search of
// 50 results, to 274 MB after 50 such searches.
//
// The offsets table is read from the mapping: it is dense, so the pages
// faulted in around an entry hold other entries.
//
// The layout read is ice v1's (segment.go visitDocument): at
// storedIndexOffset a big-endian u64 offset per chunk; there, uvarint meta
// length, uvarint data length, the meta (uvarint field, offset and length
// per value) and the snappy-compressed values.
type storedReader struct {
	f      *os.File
	r      io.ReaderAt // f, or what reads it held in part (ReadPartly)
	mapped []byte      // the segment's mapping, when its records are read there (mappedStored)
	index  []byte      // the mapped offsets, 8 bytes a chunk: a small, dense table
	docs   uint64
	fields []string
}

// mappedStored is how large the segments of an index whose records are
// read through their mappings rather than with pread may be in all: what
// fault-around can make resident is bounded by them, and a read there
// costs no system call. A warm
// hybrid search reads 50 to 100 records; their preads were 58% of their
// reading, 0.13 ms of a search at 3,088 documents.
var mappedStored = 64 << 20

// guess is how much of a chunk's record one read fetches; most records fit.
const guess = 4 << 10

// readBufs holds buffers of guess bytes for reading records.
var readBufs = sync.Pool{New: func() any { return new([guess]byte) }}

// openStored opens the stored fields of the segment file name, loaded as
// seg from the mapping data; its records are read there when data fits in
// what is left of mapped, which it then takes.
func openStored(name string, data []byte, seg *iceread.Segment, mapped *int) (*storedReader, error) {
	offset, docs := seg.StoredIndexOffset(), seg.Count()
	if offset > uint64(len(data)) || docs > (uint64(len(data))-offset)/8 {
		return nil, fmt.Errorf("%w: segment %s is shorter than its stored offsets", artifact.ErrCorrupt, name)
	}
	f, err := plainread.Open(name)
	if err != nil {
		return nil, err
	}
	sr := &storedReader{f: f, r: f, index: data[offset : offset+8*docs], docs: docs, fields: seg.Fields()}
	if p := partialOf(name); p != nil {
		sr.r = p // its pieces are fetched as they are read
	} else if len(data) <= *mapped {
		sr.mapped = data
		*mapped -= len(data)
	}
	return sr, nil
}

func (r *storedReader) close() error { return r.f.Close() }

// An arena holds the stored values of one search's hits: one allocation
// for many records, reused by the next search, where a record's own
// allocation made a search at 30x allocate half a megabyte.
type arena struct{ buf []byte }

// alloc returns n bytes of the arena, or of the heap with no arena.
func (a *arena) alloc(n int) []byte {
	if a == nil {
		return make([]byte, n)
	}
	if cap(a.buf)-len(a.buf) < n {
		// Earlier records keep the old buffer alive as long as they need.
		a.buf = make([]byte, 0, max(n, 2*cap(a.buf), 64<<10))
	}
	a.buf = a.buf[:len(a.buf)+n]
	return a.buf[len(a.buf)-n:]
}

var arenas = sync.Pool{New: func() any { return new(arena) }}

// newArena returns an arena from the pool; release returns it, once
// nothing reads what it holds.
func newArena() *arena { return arenas.Get().(*arena) }

func (a *arena) release() {
	a.buf = a.buf[:0]
	if cap(a.buf) > 1<<20 {
		a.buf = nil // a rare search that read many records: not kept
	}
	arenas.Put(a)
}

// visit calls visit with each stored field of chunk doc. The values are
// in memory of the chunk's own, from a or the heap, which visit may keep.
func (r *storedReader) visit(doc uint64, a *arena, visit segment.StoredFieldVisitor) error {
	if doc >= r.docs {
		return fmt.Errorf("%w: chunk %d of a segment of %d", artifact.ErrCorrupt, doc, r.docs)
	}
	off := int64(binary.BigEndian.Uint64(r.index[8*doc:]))
	if off < 0 {
		return fmt.Errorf("%w: stored fields of chunk %d", artifact.ErrCorrupt, doc)
	}
	var buf []byte
	if r.mapped != nil {
		if off >= int64(len(r.mapped)) {
			return fmt.Errorf("%w: stored fields of chunk %d", artifact.ErrCorrupt, doc)
		}
		buf = r.mapped[off:min(off+guess, int64(len(r.mapped)))]
	} else {
		pooled := readBufs.Get().(*[guess]byte)
		defer readBufs.Put(pooled)
		buf = pooled[:]
		n, err := r.r.ReadAt(buf, off)
		if n < 2 && err != nil {
			return fmt.Errorf("read stored fields: %w", err)
		}
		buf = buf[:n]
	}
	metaLen, k1 := binary.Uvarint(buf)
	dataLen, k2 := uvarintFrom(buf, k1)
	if k1 <= 0 || k2 <= 0 || metaLen > 1<<30 || dataLen > 1<<30 {
		return fmt.Errorf("%w: stored fields of chunk %d", artifact.ErrCorrupt, doc)
	}
	head := k1 + k2
	need := head + int(metaLen) + int(dataLen)
	switch {
	case need <= len(buf):
	case r.mapped != nil:
		if int64(need) > int64(len(r.mapped))-off {
			return fmt.Errorf("%w: stored fields of chunk %d", artifact.ErrCorrupt, doc)
		}
		buf = r.mapped[off : off+int64(need)]
	default:
		buf = make([]byte, need)
		if _, err := r.r.ReadAt(buf, off); err != nil {
			return fmt.Errorf("read stored fields: %w", err)
		}
	}
	meta := buf[head : head+int(metaLen)]
	compressed := buf[head+int(metaLen) : need]
	size, err := unsnappy.DecodedLen(compressed)
	if err != nil || size > 1<<30 {
		return fmt.Errorf("%w: stored fields of chunk %d", artifact.ErrCorrupt, doc)
	}
	values, err := unsnappy.Decode(a.alloc(size), compressed)
	if err != nil {
		return fmt.Errorf("%w: stored fields of chunk %d: %w", artifact.ErrCorrupt, doc, err)
	}
	for pos := 0; pos < len(meta); {
		field, a := uvarintFrom(meta, pos)
		start, b := uvarintFrom(meta, pos+max(a, 0))
		length, c := uvarintFrom(meta, pos+max(a, 0)+max(b, 0))
		if a <= 0 || b <= 0 || c <= 0 || field >= uint64(len(r.fields)) || start > uint64(len(values)) || length > uint64(len(values))-start {
			return fmt.Errorf("%w: stored fields of chunk %d", artifact.ErrCorrupt, doc)
		}
		pos += a + b + c
		if !visit(r.fields[field], values[start:start+length]) {
			break
		}
	}
	return nil
}

// uvarintFrom decodes a uvarint at b[pos:]; n ≤ 0 when there is none.
func uvarintFrom(b []byte, pos int) (uint64, int) {
	if pos < 0 || pos >= len(b) {
		return 0, 0
	}
	return binary.Uvarint(b[pos:])
}
