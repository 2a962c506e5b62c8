package query

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/kbqdev/kbq/artifact"
	"github.com/kbqdev/kbq/artifact/iceread"
	"github.com/kbqdev/kbq/artifact/postings"
)

// A file of an index can be held in part: kbq --db fetches the parts of
// a segment that searches read piecemeal, its stored fields and its
// postings lists, most of its size, as searches read them, and the rest,
// the tables every search reads, whole (pgread). Such a file is read
// through the Partial registered for it, which fetches what is missing.
type Partial interface {
	// ReadAt reads the file, fetching first what it lacks of what is
	// read.
	io.ReaderAt
	// Need fetches what the file lacks of bytes [off, end), before
	// they are read through its mapping.
	Need(off, end int64) error
}

var partial struct {
	sync.Mutex
	files []partialFile
}

type partialFile struct {
	info os.FileInfo
	p    Partial
}

// ReadPartly has the file at path, whichever name it is opened by, read
// through p from now on; done ends it, once the file is whole.
func ReadPartly(path string, p Partial) (done func(), err error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	f := partialFile{fi, p}
	partial.Lock()
	partial.files = append(partial.files, f)
	partial.Unlock()
	return func() {
		partial.Lock()
		defer partial.Unlock()
		partial.files = slices.DeleteFunc(partial.files, func(g partialFile) bool { return g.info == f.info })
	}, nil
}

// partialOf is what reads the file at name, held in part; nil when it is
// whole.
func partialOf(name string) Partial {
	partial.Lock()
	defer partial.Unlock()
	if len(partial.files) == 0 {
		return nil
	}
	fi, err := os.Stat(name)
	if err != nil {
		return nil
	}
	for _, f := range partial.files {
		if os.SameFile(f.info, fi) {
			return f.p
		}
	}
	return nil
}

// PartlyRead says whether the file name of an index is read in part where
// it can be, and how many bytes at its end PartEnd reads.
func PartlyRead(name string) (footerLen int, ok bool) {
	switch {
	case strings.HasSuffix(name, ".seg"):
		return segmentFooterLen, true
	case strings.HasSuffix(name, ".kbt"):
		return postings.FooterLen, true
	case ReadWhenNeeded(name):
		return 0, true
	}
	return 0, false
}

// ReadWhenNeeded says whether the file name of an artifact is read whole
// only when first needed, whatever its size: the document table, which
// listing, getting and some filters read, and a search does not.
func ReadWhenNeeded(name string) bool {
	return filepath.Base(filepath.FromSlash(name)) == artifact.DocumentsFile
}

// PartEnd reads footer, the last bytes of the file name of size bytes,
// which PartlyRead accepted, and returns where the part of it searches
// read piecemeal ends: it is the file's first bytes (all of a file read
// when needed).
func PartEnd(name string, footer []byte, size int64) (int64, error) {
	if ReadWhenNeeded(name) {
		return size, nil
	}
	if strings.HasSuffix(name, ".kbt") {
		end, err := postings.ListsEnd(footer, size)
		if err != nil {
			return 0, fmt.Errorf("%w: %v", artifact.ErrCorrupt, err)
		}
		return end, nil
	}
	return storedFieldsEnd(footer, size)
}

// segmentFooterLen is how many bytes at the end of a segment file
// storedFieldsEnd reads.
const segmentFooterLen = 44

// storedFieldsEnd reads the footer of a segment file of size bytes, its
// last segmentFooterLen bytes, and returns where its stored fields end:
// they are the file's first bytes (ice v1: the records, then their
// offsets, the dictionaries and the footer), which only a search's
// results read, by record.
func storedFieldsEnd(footer []byte, size int64) (int64, error) {
	if len(footer) != segmentFooterLen || size < segmentFooterLen {
		return 0, fmt.Errorf("%w: a segment footer of %d bytes", artifact.ErrCorrupt, len(footer))
	}
	// The number of chunks, the stored fields' offsets, the fields'
	// index, the doc values, the chunk mode, the version and a CRC. In
	// the file the doc values come before the fields' index, both after
	// the stored fields' offsets (8 bytes a chunk); there may be no doc
	// values.
	be := binary.BigEndian
	docs, stored, fields, docValues := be.Uint64(footer), be.Uint64(footer[8:]), be.Uint64(footer[16:]), be.Uint64(footer[24:])
	version := be.Uint32(footer[36:])
	limit := uint64(size - segmentFooterLen)
	ordered := docs <= limit/8 && stored <= limit-8*docs && stored+8*docs <= fields && fields <= limit &&
		(docValues == math.MaxUint64 || stored+8*docs <= docValues && docValues <= fields)
	if version != iceread.Version || !ordered {
		return 0, fmt.Errorf("%w: a segment of version %d whose stored fields end at %d of %d bytes, before its index at %d", artifact.ErrCorrupt, version, stored, size, fields)
	}
	return int64(stored), nil
}
