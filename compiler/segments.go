package compiler

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"

	segment "github.com/blugelabs/bluge_segment_api"

	"github.com/kbqdev/kbq/artifact"
	"github.com/kbqdev/kbq/artifact/postings"
	"github.com/kbqdev/kbq/internal/safefs"
)

// A Bluge index directory holds segment files (%012x.seg), immutable once
// written, and snapshot files (%012x.snp) listing the segments that make up
// the index, each with a bitmap of its deleted documents. Bluge's own offline
// writer builds segments one at a time and always merges them into one; the
// compiler builds them in parallel and writes the snapshot itself, in
// Bluge's snapshot format version 1 (bluge v0.2.2, index/snapshot.go). It
// never runs Bluge's online writer, whose background merges are the subject
// of crash reports when batches of inserts and deletes interleave.

func normCalc(_ string, length int) float32 { return artifact.EncodeNorm(length) }

// writeSegment builds a segment of docs and writes it into dir, with the
// postings of its text fields, pw. It does not sync the files: most of a
// build's first segments are merged away, and syncSegment syncs those
// that stay.
func writeSegment(dir string, id uint64, docs []segment.Document, pw *postings.Writer) error {
	if err := writePostings(dir, id, pw); err != nil {
		return err
	}
	err := writeFile(filepath.Join(dir, artifact.SegmentName(id)), false, func(f io.Writer) error {
		return writeIce(f, docs)
	})
	if err != nil {
		return fmt.Errorf("write segment %d: %w", id, err)
	}
	return nil
}

// writePostings writes the postings of segment id's text fields, pw,
// into dir, without syncing them.
func writePostings(dir string, id uint64, pw *postings.Writer) error {
	err := writeFile(filepath.Join(dir, postings.FileName(id)), false, func(f io.Writer) error {
		_, err := pw.WriteTo(f)
		return err
	})
	if err != nil {
		return fmt.Errorf("write postings of segment %d: %w", id, err)
	}
	return nil
}

// writeIcePart writes segment id's file in dir from its one ice part,
// without syncing it.
func writeIcePart(dir string, id uint64, part *icePart) error {
	err := writeFile(filepath.Join(dir, artifact.SegmentName(id)), false, func(f io.Writer) error {
		return joinIce(f, []*icePart{part})
	})
	if err != nil {
		return fmt.Errorf("write segment %d: %w", id, err)
	}
	return nil
}

// writeIce writes a segment's documents in ice's format, and joinIce a
// segment of parts; tests compare them with ice's own writer.
var (
	writeIce = writeIceSegment
	joinIce  = writeIceParts
	// partDocs has parts keep their documents, for joinWithIce.
	partDocs = false
)

// keepPart encodes a batch's chunks as an ice part, to be written later.
func keepPart(chunks []segment.Document) (*icePart, error) {
	docs, err := indexDocs(chunks)
	if err != nil {
		return nil, err
	}
	p := newIcePart(docs)
	if partDocs {
		p.src = chunks
	}
	return p, nil
}

// joinWithIce writes the segment of parts' documents with ice's own
// writer; their parts must keep them (partDocs).
func joinWithIce(out io.Writer, parts []*icePart) error {
	var docs []segment.Document
	for _, p := range parts {
		docs = append(docs, p.src...)
	}
	return writeWithIce(out, docs)
}

// syncSegment syncs the files of segment id, which writeSegment wrote.
func syncSegment(dir string, id uint64) error {
	for _, name := range []string{artifact.SegmentName(id), postings.FileName(id)} {
		f, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			return err
		}
		err = f.Sync()
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("sync %s: %w", name, err)
		}
	}
	return nil
}

// writeSnapshot writes the snapshot epoch listing segs into dir.
// It returns the snapshot's bytes.
func writeSnapshot(dir string, epoch uint64, segs []artifact.SnapshotSegment) ([]byte, error) {
	data, err := artifact.EncodeSnapshot(segs)
	if err != nil {
		return nil, err
	}
	return data, writeFileSync(filepath.Join(dir, artifact.SnapshotName(epoch)), func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// writeFileSync creates name, which must not exist, writes it with fill
// and syncs it to disk.
func writeFileSync(name string, fill func(io.Writer) error) error {
	return writeFile(name, true, fill)
}

// writeFile creates name, which must not exist, writes it with fill and,
// when sync is set, syncs it to disk.
func writeFile(name string, sync bool, fill func(io.Writer) error) (err error) {
	f, err := safefs.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
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
	var out io.Writer = f
	if sync {
		out = writeBack(f)
	}
	bw := bufio.NewWriterSize(out, 128<<10)
	if err := fill(bw); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	if !sync {
		return nil
	}
	return f.Sync()
}
