package compiler

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"

	"github.com/RoaringBitmap/roaring"
	segment "github.com/blugelabs/bluge_segment_api"
	"github.com/blugelabs/ice"

	"github.com/kbqdev/kbq/artifact"
)

// A Bluge index directory holds segment files (%012x.seg), immutable once
// written, and snapshot files (%012x.snp) listing the segments that make up
// the index, each with a bitmap of its deleted documents. Bluge's own offline
// writer builds segments one at a time and always merges them into one; the
// compiler builds them in parallel and writes the snapshot itself, in
// Bluge's snapshot format version 1 (bluge v0.2.2, index/snapshot.go). It
// never runs Bluge's online writer, whose background merges are the subject
// of crash reports when batches of inserts and deletes interleave.

const (
	segmentType    = ice.Type
	segmentVersion = ice.Version
	// snapshotFormat is Bluge's snapshot format version.
	snapshotFormat = 1
)

func normCalc(_ string, length int) float32 { return artifact.EncodeNorm(length) }

func segmentName(id uint64) string  { return fmt.Sprintf("%012x.seg", id) }
func snapshotName(id uint64) string { return fmt.Sprintf("%012x.snp", id) }

// writeSegment builds a segment of docs and writes it into dir.
func writeSegment(dir string, id uint64, docs []segment.Document) error {
	seg, _, err := ice.New(docs, normCalc)
	if err != nil {
		return fmt.Errorf("build segment %d: %w", id, err)
	}
	w, ok := seg.(interface {
		WriteTo(io.Writer, chan struct{}) (int64, error)
	})
	if !ok {
		return fmt.Errorf("build segment %d: segment cannot be written", id)
	}
	return writeFileSync(filepath.Join(dir, segmentName(id)), func(f io.Writer) error {
		_, err := w.WriteTo(f, nil)
		return err
	})
}

// snapshotSegment is one entry of a snapshot.
type snapshotSegment struct {
	id      uint64
	deleted *roaring.Bitmap // nil when no document is deleted
}

// writeSnapshot writes the snapshot epoch listing segs into dir.
func writeSnapshot(dir string, epoch uint64, segs []snapshotSegment) error {
	var buf bytes.Buffer
	putUvarint := func(v uint64) { buf.Write(binary.AppendUvarint(nil, v)) }
	putUvarint(snapshotFormat)
	putUvarint(uint64(len(segs)))
	for _, s := range segs {
		putUvarint(uint64(len(segmentType)))
		buf.WriteString(segmentType)
		buf.Write(binary.BigEndian.AppendUint32(nil, segmentVersion))
		putUvarint(s.id)
		if s.deleted == nil || s.deleted.IsEmpty() {
			putUvarint(0)
			continue
		}
		s.deleted.RunOptimize()
		bits, err := s.deleted.ToBytes()
		if err != nil {
			return fmt.Errorf("encode deletions of segment %d: %w", s.id, err)
		}
		putUvarint(uint64(len(bits)))
		buf.Write(bits)
	}
	buf.Write(binary.BigEndian.AppendUint32(nil, crc32.ChecksumIEEE(buf.Bytes())))
	return writeFileSync(filepath.Join(dir, snapshotName(epoch)), func(w io.Writer) error {
		_, err := w.Write(buf.Bytes())
		return err
	})
}

// writeFileSync creates name, which must not exist, writes it with fill
// and syncs it to disk.
func writeFileSync(name string, fill func(io.Writer) error) (err error) {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(name)
		}
	}()
	bw := bufio.NewWriterSize(f, 1<<20)
	if err := fill(bw); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	return f.Sync()
}

// readSnapshot reads the newest snapshot of an index directory written by
// writeSnapshot: its epoch and its segments with their deletions.
func readSnapshot(dir string) (uint64, []snapshotSegment, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0, nil, err
	}
	var epoch uint64
	found := false
	for _, e := range entries {
		var id uint64
		if n, _ := fmt.Sscanf(e.Name(), "%012x.snp", &id); n == 1 && (!found || id > epoch) {
			epoch, found = id, true
		}
	}
	if !found {
		return 0, nil, fmt.Errorf("no snapshot in %s", dir)
	}
	data, err := os.ReadFile(filepath.Join(dir, snapshotName(epoch)))
	if err != nil {
		return 0, nil, err
	}
	if len(data) < 4 || crc32.ChecksumIEEE(data[:len(data)-4]) != binary.BigEndian.Uint32(data[len(data)-4:]) {
		return 0, nil, fmt.Errorf("snapshot %s: checksum mismatch", snapshotName(epoch))
	}
	r := bytes.NewReader(data[:len(data)-4])
	next := func() uint64 {
		v, e := binary.ReadUvarint(r)
		if e != nil && err == nil {
			err = e
		}
		return v
	}
	if v := next(); v != snapshotFormat {
		return 0, nil, fmt.Errorf("snapshot format %d, want %d", v, snapshotFormat)
	}
	segs := make([]snapshotSegment, next())
	for i := range segs {
		typ := make([]byte, next())
		if _, e := io.ReadFull(r, typ); e != nil {
			return 0, nil, e
		}
		var ver [4]byte
		if _, e := io.ReadFull(r, ver[:]); e != nil {
			return 0, nil, e
		}
		if string(typ) != segmentType || binary.BigEndian.Uint32(ver[:]) != segmentVersion {
			return 0, nil, fmt.Errorf("segment type %s version %d, want %s %d", typ, binary.BigEndian.Uint32(ver[:]), segmentType, segmentVersion)
		}
		segs[i].id = next()
		if n := next(); n > 0 {
			bits := make([]byte, n)
			if _, e := io.ReadFull(r, bits); e != nil {
				return 0, nil, e
			}
			segs[i].deleted = roaring.New()
			if _, e := segs[i].deleted.FromBuffer(bits); e != nil {
				return 0, nil, fmt.Errorf("snapshot deletions: %w", e)
			}
			segs[i].deleted = segs[i].deleted.Clone() // FromBuffer aliases bits
		}
	}
	if err != nil {
		return 0, nil, fmt.Errorf("read snapshot: %w", err)
	}
	return epoch, segs, nil
}
