package artifact

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/RoaringBitmap/roaring"

	"github.com/kbqdev/kbq/artifact/iceread"
	"github.com/kbqdev/kbq/artifact/postings"
	"github.com/kbqdev/kbq/internal/plainread"
)

// A Bluge index directory holds segment files (%012x.seg), immutable once
// written, and snapshot files (%012x.snp) listing the segments that make up
// the index, each with a bitmap of its deleted documents. kbc writes both
// itself, in Bluge's snapshot format version 1 (bluge v0.2.2,
// index/snapshot.go) and ice segments; kbq reads them itself. Both
// sides check them with the functions here before trusting a manifest's
// placement of documents.

const (
	// SegmentType and SegmentVersion name the segment format.
	SegmentType    = iceread.Type
	SegmentVersion = iceread.Version
	// segmentFooterLen is the size of an ice segment's footer: document
	// count, three offsets, chunk mode, version and CRC.
	segmentFooterLen = iceread.FooterLen
)

// SegmentName is the file name of segment id.
func SegmentName(id uint64) string { return fmt.Sprintf("%012x.seg", id) }

// SnapshotName is the file name of snapshot epoch.
func SnapshotName(epoch uint64) string { return fmt.Sprintf("%012x.snp", epoch) }

// snapshotEpoch is the epoch of the snapshot file called name; false when
// name is not one SnapshotName gives.
func snapshotEpoch(name string) (uint64, bool) {
	digits, ok := strings.CutSuffix(name, ".snp")
	if !ok {
		return 0, false
	}
	epoch, err := strconv.ParseUint(digits, 16, 64)
	return epoch, err == nil && SnapshotName(epoch) == name
}

// SnapshotSegment is one entry of a snapshot.
type SnapshotSegment struct {
	ID      uint64
	Deleted *roaring.Bitmap // nil when no document is deleted
}

// Snapshot is the newest snapshot of an index directory.
type Snapshot struct {
	Epoch    uint64
	Segments []SnapshotSegment
}

// EncodeSnapshot returns the bytes of a snapshot listing segs.
func EncodeSnapshot(segs []SnapshotSegment) ([]byte, error) {
	var buf bytes.Buffer
	putUvarint := func(v uint64) { buf.Write(binary.AppendUvarint(nil, v)) }
	putUvarint(snapshotFormat)
	putUvarint(uint64(len(segs)))
	for _, s := range segs {
		putUvarint(uint64(len(SegmentType)))
		buf.WriteString(SegmentType)
		buf.Write(binary.BigEndian.AppendUint32(nil, SegmentVersion))
		putUvarint(s.ID)
		if s.Deleted == nil || s.Deleted.IsEmpty() {
			putUvarint(0)
			continue
		}
		s.Deleted.RunOptimize()
		bits, err := s.Deleted.ToBytes()
		if err != nil {
			return nil, fmt.Errorf("encode deletions of segment %d: %w", s.ID, err)
		}
		putUvarint(uint64(len(bits)))
		buf.Write(bits)
	}
	buf.Write(binary.BigEndian.AppendUint32(nil, crc32.ChecksumIEEE(buf.Bytes())))
	return buf.Bytes(), nil
}

// ReadSnapshot reads the newest snapshot of the index directory dir. Every
// failure wraps ErrCorrupt and names the file.
func ReadSnapshot(dir string) (*Snapshot, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("%w: read index %s: %w", ErrCorrupt, dir, err)
	}
	var epoch uint64
	found := false
	for _, e := range entries {
		if id, ok := snapshotEpoch(e.Name()); ok && (!found || id > epoch) {
			epoch, found = id, true
		}
	}
	if !found {
		return nil, fmt.Errorf("%w: index %s has no snapshot file", ErrCorrupt, dir)
	}
	name := filepath.Join(dir, SnapshotName(epoch))
	data, err := plainread.ReadFile(name, 0)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	segs, err := decodeSnapshot(data)
	if err != nil {
		return nil, fmt.Errorf("%w: snapshot %s: %w", ErrCorrupt, name, err)
	}
	return &Snapshot{Epoch: epoch, Segments: segs}, nil
}

func decodeSnapshot(data []byte) ([]SnapshotSegment, error) {
	if len(data) < 4 || crc32.ChecksumIEEE(data[:len(data)-4]) != binary.BigEndian.Uint32(data[len(data)-4:]) {
		return nil, errors.New("checksum mismatch")
	}
	r := bytes.NewReader(data[:len(data)-4])
	var err error
	next := func() uint64 {
		v, e := binary.ReadUvarint(r)
		if e != nil && err == nil {
			err = e
		}
		return v
	}
	if v := next(); v != snapshotFormat {
		return nil, fmt.Errorf("snapshot format %d, want %d", v, snapshotFormat)
	}
	n := next()
	if n > uint64(r.Len()) {
		return nil, fmt.Errorf("%d segments in %d bytes", n, r.Len())
	}
	segs := make([]SnapshotSegment, n)
	for i := range segs {
		typ := make([]byte, min(next(), uint64(r.Len())))
		if _, e := io.ReadFull(r, typ); e != nil {
			return nil, e
		}
		var ver [4]byte
		if _, e := io.ReadFull(r, ver[:]); e != nil {
			return nil, e
		}
		if string(typ) != SegmentType || binary.BigEndian.Uint32(ver[:]) != SegmentVersion {
			return nil, fmt.Errorf("segment type %s version %d, want %s %d", typ, binary.BigEndian.Uint32(ver[:]), SegmentType, SegmentVersion)
		}
		segs[i].ID = next()
		if n := next(); n > 0 {
			if n > uint64(r.Len()) {
				return nil, fmt.Errorf("deletions of %d bytes in %d", n, r.Len())
			}
			bits := make([]byte, n)
			if _, e := io.ReadFull(r, bits); e != nil {
				return nil, e
			}
			segs[i].Deleted = roaring.New()
			if _, e := segs[i].Deleted.FromBuffer(bits); e != nil {
				return nil, fmt.Errorf("deletions of segment %d: %w", segs[i].ID, e)
			}
			segs[i].Deleted = segs[i].Deleted.Clone() // FromBuffer aliases bits
		}
	}
	if err != nil {
		return nil, err
	}
	return segs, nil
}

// CheckSegment reads the footer of the segment file name and returns the
// number of documents it holds. A missing file, one too short for its
// footer, of another version, or whose offsets point past its end (a
// truncated copy) is an error wrapping ErrCorrupt. It does not read the
// whole file.
func CheckSegment(name string) (uint64, error) {
	f, err := os.Open(name)
	if errors.Is(err, os.ErrNotExist) {
		return 0, fmt.Errorf("%w: segment %s is missing", ErrCorrupt, name)
	}
	if err != nil {
		return 0, fmt.Errorf("%w: segment %w", ErrCorrupt, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, fmt.Errorf("%w: segment %w", ErrCorrupt, err)
	}
	size := fi.Size()
	if size < segmentFooterLen {
		return 0, fmt.Errorf("%w: segment %s is truncated (%d bytes)", ErrCorrupt, name, size)
	}
	var foot [segmentFooterLen]byte
	if _, err := f.ReadAt(foot[:], size-segmentFooterLen); err != nil {
		return 0, fmt.Errorf("%w: segment %s: %w", ErrCorrupt, name, err)
	}
	be := binary.BigEndian
	numDocs := be.Uint64(foot[0:])
	offsets := []uint64{be.Uint64(foot[8:]), be.Uint64(foot[16:]), be.Uint64(foot[24:])}
	if v := be.Uint32(foot[36:]); v != SegmentVersion {
		return 0, fmt.Errorf("%w: segment %s is truncated or not a segment of version %d", ErrCorrupt, name, SegmentVersion)
	}
	for _, off := range offsets {
		// The doc-values offset is all ones when no field has doc values.
		if off != ^uint64(0) && off > uint64(size-segmentFooterLen) {
			return 0, fmt.Errorf("%w: segment %s is truncated: its footer points past its end", ErrCorrupt, name)
		}
	}
	if numDocs > uint64(size) {
		return 0, fmt.Errorf("%w: segment %s claims %d documents in %d bytes", ErrCorrupt, name, numDocs, size)
	}
	return numDocs, nil
}

// CheckPlacement reports whether the manifest's documents are where it
// says they are in the index: every document's chunks in a segment of
// snap, within that segment's count (counts, by segment id, from
// CheckSegment) and not deleted, and every live chunk of the index
// belonging to a document. A mismatch wraps ErrCorrupt and names a
// document or segment.
func (m *Manifest) CheckPlacement(snap *Snapshot, counts map[uint64]uint64) error {
	bySeg := make(map[uint64]*SnapshotSegment, len(snap.Segments))
	for i := range snap.Segments {
		bySeg[snap.Segments[i].ID] = &snap.Segments[i]
	}
	claimed := make(map[uint64]uint64, len(snap.Segments))
	total := 0
	for _, d := range m.Documents {
		total += d.Chunks
		if d.Chunks == 0 {
			continue
		}
		s := bySeg[d.Seg]
		if s == nil {
			return fmt.Errorf("%w: %s is in the manifest but its segment %d is not in the index", ErrCorrupt, d.Path, d.Seg)
		}
		end := uint64(d.Doc) + uint64(d.Chunks)
		if end > counts[d.Seg] {
			return fmt.Errorf("%w: %s is in the manifest but past the end of segment %d in the index", ErrCorrupt, d.Path, d.Seg)
		}
		if s.Deleted != nil && s.Deleted.IntersectsWithInterval(uint64(d.Doc), end) {
			return fmt.Errorf("%w: %s is in the manifest but deleted in the index", ErrCorrupt, d.Path)
		}
		claimed[d.Seg] += uint64(d.Chunks)
	}
	if total != m.Counts.Chunks {
		return fmt.Errorf("%w: the manifest counts %d chunks but its documents hold %d", ErrCorrupt, m.Counts.Chunks, total)
	}
	for _, s := range snap.Segments {
		live := counts[s.ID]
		if s.Deleted != nil {
			live -= min(live, s.Deleted.GetCardinality())
		}
		if live != claimed[s.ID] {
			return fmt.Errorf("%w: segment %d of the index holds %d live chunks, the manifest places %d there", ErrCorrupt, s.ID, live, claimed[s.ID])
		}
	}
	return nil
}

// CheckIndex checks the index directory dir against the manifest: its
// snapshot, the footers of its segments and, when the manifest holds its
// documents, their placement. It returns the snapshot.
func (m *Manifest) CheckIndex(dir string) (*Snapshot, error) {
	snap, err := ReadSnapshot(dir)
	if err != nil {
		return nil, err
	}
	counts := make(map[uint64]uint64, len(snap.Segments))
	for _, s := range snap.Segments {
		n, err := CheckSegment(filepath.Join(dir, SegmentName(s.ID)))
		if err != nil {
			return nil, err
		}
		if err := checkPostings(filepath.Join(dir, postings.FileName(s.ID)), n); err != nil {
			return nil, err
		}
		counts[s.ID] = n
	}
	if m.Documents != nil {
		if err := m.CheckPlacement(snap, counts); err != nil {
			return nil, err
		}
	}
	return snap, nil
}

// checkPostings checks the postings file beside a segment of docs chunks.
func checkPostings(name string, docs uint64) error {
	r, err := postings.Open(name)
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("%w: postings %s are missing", ErrCorrupt, name)
	}
	if err != nil {
		return fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	defer r.Close()
	if uint64(r.Docs()) != docs {
		return fmt.Errorf("%w: postings %s hold %d chunks, their segment %d", ErrCorrupt, name, r.Docs(), docs)
	}
	return nil
}
