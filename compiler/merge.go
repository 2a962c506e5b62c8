package compiler

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"time"

	"github.com/RoaringBitmap/roaring"
	segment "github.com/blugelabs/bluge_segment_api"
	"github.com/blugelabs/ice"
	"golang.org/x/sync/errgroup"

	"github.com/kbqdev/kbq/artifact"
	"github.com/kbqdev/kbq/artifact/postings"
	"github.com/kbqdev/kbq/internal/mmap"
)

// A build writes small segments in parallel, each from one batch, and then
// merges them, so that a query opens a few segments, whatever the size of
// the knowledge base: a full build merges its batches into segments of at
// least tierChunks chunks, about fullSegments of them for a large corpus.
// A full build of up to keepDocs documents whose batches all end in one
// segment keeps their ice parts in memory instead and writes that segment
// from them (joinKept): the batches' ice segments are neither written nor
// read back.
// Incremental builds add a small segment each; once smallSegments of those
// pile up they are merged into one, along with any segment that lost most
// of its chunks, so the count stays bounded and an edit costs a small
// merge at most.
const (
	tierChunks    = 1 << 16
	fullSegments  = 8
	smallSegments = 4
)

// keepChunks is the most chunks whose ice parts a full build keeps to
// join: a build of more ends in more than one segment. Tests lower it.
// The parts held (their stored records, about two thirds of their
// documents' bytes) count against the build's memory, three times over
// with the collector's pace: a build of twice the PowerShell docs (6,166
// documents, 64 MiB, 45,816 chunks) peaked at 255 MB keeping them, 270 MB
// when it stopped at 40 MiB, against 202 MB merging. So only a build of
// keepDocs documents or fewer keeps them, and stops at keepBytes.
var (
	keepChunks = tierChunks
	keepDocs   = 4096
	keepBytes  = 48 << 20
)

// segSize is a segment of the index being built and its chunk counts.
type segSize struct {
	artifact.SnapshotSegment
	chunks, live uint64
	bytes        int64 // of its ice segment file
}

// tierTarget returns the size a full build's segments grow to.
func tierTarget(live uint64) uint64 {
	return max(tierChunks, (live+fullSegments-1)/fullSegments)
}

// fullMerges groups consecutive segments of a full build into segments of
// at least the tier's target size.
func fullMerges(segs []segSize) [][]int {
	var live uint64
	for _, s := range segs {
		live += s.live
	}
	target := tierTarget(live)
	var groups [][]int
	var cur []int
	var size uint64
	for i, s := range segs {
		cur = append(cur, i)
		size += s.live
		if size >= target {
			groups = append(groups, cur)
			cur, size = nil, 0
		}
	}
	if len(cur) > 0 {
		groups = append(groups, cur)
	}
	return slices.DeleteFunc(groups, func(g []int) bool { return len(g) < 2 })
}

// incrementalMerges picks the small and the mostly deleted segments of an
// updated index to merge into one, once there are enough of them.
func incrementalMerges(segs []segSize) [][]int {
	var live uint64
	for _, s := range segs {
		live += s.live
	}
	small := tierTarget(live) / 4
	var group []int
	for i, s := range segs {
		if s.live < small || 2*s.live < s.chunks {
			group = append(group, i)
		}
	}
	if len(group) < smallSegments {
		return nil
	}
	return [][]int{group}
}

// sizes returns the segments of the index being built with their sizes.
func (b *indexBuild) sizes(segs []artifact.SnapshotSegment) ([]segSize, error) {
	out := make([]segSize, len(segs))
	for i, s := range segs {
		name := filepath.Join(b.dir, artifact.SegmentName(s.ID))
		n, err := artifact.CheckSegment(name)
		if err != nil {
			return nil, err
		}
		fi, err := os.Stat(name)
		if err != nil {
			return nil, err
		}
		out[i] = segSize{SnapshotSegment: s, chunks: n, live: n, bytes: fi.Size()}
		if s.Deleted != nil {
			out[i].live -= min(s.Deleted.GetCardinality(), n)
		}
	}
	return out, nil
}

// merge merges segments of the index being built as the policy above
// says, and moves the documents they hold to the merged segments.
func (b *indexBuild) merge(segs []artifact.SnapshotSegment, docs []artifact.Document) ([]artifact.SnapshotSegment, error) {
	sizes, err := b.sizes(segs)
	if err != nil {
		return nil, err
	}
	groups := fullMerges(sizes)
	if b.prev != nil {
		groups = incrementalMerges(sizes)
	}
	if len(groups) == 0 {
		return segs, nil
	}
	large := func(group []int) bool {
		var n int64
		for _, si := range group {
			n += sizes[si].bytes
		}
		return n > int64(mapMergeBytes)
	}
	if slices.ContainsFunc(groups, large) {
		// The pages large merges map count against the build's memory
		// with its heap: the heap gets that much less while they run.
		if limit := debug.SetMemoryLimit(-1); limit != math.MaxInt64 {
			debug.SetMemoryLimit(max(limit-mergeMappedBytes, limit/2))
			defer debug.SetMemoryLimit(limit)
		}
	}
	type merged struct {
		id      uint64
		newDocs [][]uint64
	}
	results := make([]merged, len(groups))
	var g errgroup.Group
	g.SetLimit(max(b.opts.Workers, 1))
	for gi, group := range groups {
		results[gi].id = b.nextSeg
		b.nextSeg++
		g.Go(func() error {
			in := make([]artifact.SnapshotSegment, len(group))
			for i, si := range group {
				in[i] = segs[si]
			}
			newDocs, err := mergeSegments(b.dir, in, results[gi].id)
			results[gi].newDocs = newDocs
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	// Where each merged segment's chunks went.
	type move struct {
		to      uint64
		newDocs []uint64
	}
	moves := make(map[uint64]move)
	gone := make(map[int]bool)
	for gi, group := range groups {
		for i, si := range group {
			moves[segs[si].ID] = move{to: results[gi].id, newDocs: results[gi].newDocs[i]}
			gone[si] = true
		}
	}
	for i := range docs {
		d := &docs[i]
		mv, ok := moves[d.Seg]
		if !ok {
			continue
		}
		if int(d.Doc) >= len(mv.newDocs) || mv.newDocs[d.Doc] == iceDropped {
			return nil, fmt.Errorf("merge segments: %s is not in segment %d", d.Path, d.Seg)
		}
		d.Seg, d.Doc = mv.to, uint32(mv.newDocs[d.Doc])
	}
	var out []artifact.SnapshotSegment
	for i, s := range segs {
		if !gone[i] {
			out = append(out, s)
			continue
		}
		for _, name := range []string{artifact.SegmentName(s.ID), postings.FileName(s.ID)} {
			if err := os.Remove(filepath.Join(b.dir, name)); err != nil {
				return nil, fmt.Errorf("merge segments: %w", err)
			}
		}
	}
	for _, r := range results {
		out = append(out, artifact.SnapshotSegment{ID: r.id})
	}
	return out, nil
}

// joinKept writes the segment of a full build whose batches' ice parts
// were kept, all of them: the parts joined into one ice segment, beside
// their postings joined as a merge joins them, and moves docs to it. A
// merge would have read the batches' segments back to write that
// segment; this writes none of them.
func (b *indexBuild) joinKept(docs []artifact.Document) (_ []artifact.SnapshotSegment, err error) {
	switch len(b.batches) {
	case 0:
		return nil, nil
	case 1:
		bt := b.batches[0]
		if err := bt.writeKept(b.dir); err != nil {
			return nil, err
		}
		return []artifact.SnapshotSegment{{ID: bt.seg}}, nil
	}
	id := b.nextSeg
	b.nextSeg++
	parts := make([]*icePart, len(b.batches))
	texts := make([]*postings.Reader, 0, len(b.batches))
	defer func() {
		for _, t := range texts {
			t.Close()
		}
	}()
	newDocs := make([][]uint64, len(b.batches))
	base := make(map[uint64]uint32, len(b.batches))
	var chunks uint64
	for i, bt := range b.batches {
		parts[i], bt.part, bt.keep = bt.part, nil, false
		text, err := postings.Open(filepath.Join(b.dir, postings.FileName(bt.seg)))
		if err != nil {
			return nil, fmt.Errorf("join segment %d: %w", bt.seg, err)
		}
		texts = append(texts, text)
		base[bt.seg] = uint32(chunks)
		newDocs[i] = make([]uint64, bt.chunks)
		for j := range newDocs[i] {
			newDocs[i][j] = chunks + uint64(j)
		}
		chunks += uint64(bt.chunks)
	}
	var g errgroup.Group
	g.Go(func() error {
		return writeFileSync(filepath.Join(b.dir, postings.FileName(id)), func(w io.Writer) error {
			_, err := postings.Merge(w, texts, newDocs, iceDropped)
			return err
		})
	})
	g.Go(func() error {
		return writeFileSync(filepath.Join(b.dir, artifact.SegmentName(id)), func(w io.Writer) error {
			return joinIce(w, parts)
		})
	})
	if err := g.Wait(); err != nil {
		return nil, fmt.Errorf("join into segment %d: %w", id, err)
	}
	for i := range docs {
		d := &docs[i]
		at, ok := base[d.Seg]
		if !ok {
			return nil, fmt.Errorf("join segments: %s is in segment %d, not of this build", d.Path, d.Seg)
		}
		d.Seg, d.Doc = id, at+d.Doc
	}
	for _, t := range texts {
		t.Close()
	}
	texts = nil
	for _, bt := range b.batches {
		if err := os.Remove(filepath.Join(b.dir, postings.FileName(bt.seg))); err != nil {
			return nil, fmt.Errorf("join segments: %w", err)
		}
	}
	return []artifact.SnapshotSegment{{ID: id}}, nil
}

// mapMergeBytes is the largest merge whose inputs' pages are kept as it
// reads them. A merge maps its inputs (read with pread, a large merge's
// segments took 2.2 s in system calls at 30 copies of PowerShell-Docs, 4%
// of the build), and mapped pages count as the build's memory, the system
// mapping pages around each one read: a larger merge releases the pages
// of its segments and postings every releaseEvery and every releaseBytes
// it writes, and the heap's limit is lowered by mergeMappedBytes while it
// runs. A page read again is mapped again from the page cache.
var (
	mapMergeBytes = 64 << 20
	releaseEvery  = 10 * time.Millisecond
	releaseBytes  = 4 << 20
	// mergeMappedBytes is what the heap's memory limit is lowered by
	// while large merges run: the pages they have mapped at a time.
	mergeMappedBytes int64 = 64 << 20
)

// renumber numbers the chunks of segs as ice.Merge does: the live ones in
// order, from segment to segment; deleted ones are iceDropped.
func renumber(segs []segment.Segment, drops []*roaring.Bitmap) [][]uint64 {
	out := make([][]uint64, len(segs))
	var next uint64
	for i, seg := range segs {
		out[i] = make([]uint64, seg.Count())
		for d := range out[i] {
			if drops[i] != nil && drops[i].Contains(uint32(d)) {
				out[i][d] = iceDropped
				continue
			}
			out[i][d] = next
			next++
		}
	}
	return out
}

// releasingWriter calls release every releaseBytes written through it: a
// merge copies much of what it reads, stored fields whole, reading pages
// as fast as it writes them, faster than releasing's ticks (with the
// ticks alone, 30 copies of PowerShell-Docs held 128 MB of mapped pages
// at a time).
type releasingWriter struct {
	w       io.Writer
	n       int
	release func()
}

func (r *releasingWriter) Write(p []byte) (int, error) {
	n, err := r.w.Write(p)
	if r.n += n; r.n >= releaseBytes {
		r.n = 0
		r.release()
	}
	return n, err
}

// releasing calls release every releaseEvery until stop is called.
func releasing(release func()) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(releaseEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				release()
			}
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}

// iceDropped is how ice.Merge numbers a chunk it leaves out.
const iceDropped = math.MaxInt64

// mergeSegments merges the segments in of dir, without their deleted
// chunks, into segment id, and returns where each chunk went.
func mergeSegments(dir string, in []artifact.SnapshotSegment, id uint64) (_ [][]uint64, err error) {
	inputs, err := openMergeInputs(dir, in)
	if err != nil {
		return nil, err
	}
	defer inputs.close()
	segs, texts, drops := inputs.segs, inputs.texts, inputs.drops
	output := func(w io.Writer) io.Writer { return w }
	if inputs.large {
		release := func() {
			for _, t := range texts {
				t.Release()
			}
			for _, mem := range inputs.mems {
				mmap.Release(mem)
			}
		}
		defer releasing(release)()
		output = func(w io.Writer) io.Writer { return &releasingWriter{w: w, release: release} }
	}
	// The postings merge needs the new chunk numbers, which follow from the
	// deletions alone; it runs beside ice's merge, which must agree.
	newDocs := renumber(segs, drops)
	var text errgroup.Group
	text.Go(func() error {
		return writeFileSync(filepath.Join(dir, postings.FileName(id)), func(w io.Writer) error {
			_, err := postings.Merge(output(w), texts, newDocs, iceDropped)
			return err
		})
	})
	m := ice.Merge(segs, drops, 1<<20)
	err = writeFileSync(filepath.Join(dir, artifact.SegmentName(id)), func(w io.Writer) error {
		_, err := m.WriteTo(output(w), nil)
		return err
	})
	if terr := text.Wait(); err == nil {
		err = terr
	}
	if err == nil && !slices.EqualFunc(newDocs, m.DocumentNumbers(), slices.Equal) {
		err = errors.New("ice numbered the merged chunks differently")
	}
	if err != nil {
		return nil, fmt.Errorf("merge into segment %d: %w", id, err)
	}
	return newDocs, nil
}

// mergeInputs are the segments a merge reads, with their postings and
// deletions.
type mergeInputs struct {
	segs   []segment.Segment
	texts  []*postings.Reader
	drops  []*roaring.Bitmap
	mems   [][]byte // the segments' mappings
	unmaps []func() error
	large  bool // over mapMergeBytes: pages are released as the merge goes
}

// openMergeInputs opens and maps the segments in of dir.
func openMergeInputs(dir string, in []artifact.SnapshotSegment) (_ *mergeInputs, err error) {
	m := &mergeInputs{drops: make([]*roaring.Bitmap, len(in))}
	defer func() {
		if err != nil {
			m.close()
		}
	}()
	size := 0
	for _, s := range in {
		fi, err := os.Stat(filepath.Join(dir, artifact.SegmentName(s.ID)))
		if err != nil {
			return nil, fmt.Errorf("merge segment %d: %w", s.ID, err)
		}
		size += int(fi.Size())
	}
	m.large = size > mapMergeBytes
	for i, s := range in {
		mem, unmap, err := mmap.Map(filepath.Join(dir, artifact.SegmentName(s.ID)))
		if err != nil {
			return nil, fmt.Errorf("merge segment %d: %w", s.ID, err)
		}
		m.unmaps = append(m.unmaps, unmap)
		m.mems = append(m.mems, mem)
		seg, err := ice.Load(segment.NewDataBytes(mem))
		if err != nil {
			return nil, fmt.Errorf("merge segment %d: %w", s.ID, err)
		}
		m.segs = append(m.segs, seg)
		text, err := postings.Open(filepath.Join(dir, postings.FileName(s.ID)))
		if err != nil {
			return nil, fmt.Errorf("merge segment %d: %w", s.ID, err)
		}
		m.texts = append(m.texts, text)
		m.drops[i] = s.Deleted
	}
	return m, nil
}

func (m *mergeInputs) close() {
	for _, t := range m.texts {
		t.Close()
	}
	for _, u := range m.unmaps {
		u()
	}
}
