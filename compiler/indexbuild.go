package compiler

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/RoaringBitmap/roaring"
	segment "github.com/blugelabs/bluge_segment_api"
	"golang.org/x/sync/errgroup"

	"github.com/kbqdev/kbq/artifact"
	"github.com/kbqdev/kbq/artifact/postings"
	"github.com/kbqdev/kbq/compiler/checks"
	"github.com/kbqdev/kbq/knowledge"
)

// Segment batches: a segment is built in memory, so these bound the memory
// a build needs, whatever the size of the corpus.
const (
	batchChunks = 2048
	batchBytes  = 24 << 20
)

// indexBuild compiles documents into one index directory: from scratch, or
// on top of the previous artifact's segments (prev).
type indexBuild struct {
	dir   string
	opts  BuildOptions
	res   *BuildResult
	prev  *previous
	texts map[string][]string // blob → its chunks' texts, to embed
	// oldVecs are the previous artifact's vectors, reused by blob and by
	// text even when its index is not; otherVecs another artifact's,
	// reused by text (BuildOptions.ReuseVectors).
	oldVecs, otherVecs oldVectors

	facts  []checks.Facts
	blobs  map[string]string // path → blob of a document read, when not its listed one; with a base to compare with
	failed bool              // an error was found; stop writing segments
	dirtyc chan dirtyResult  // the comparison with the base, once started
	// baseBlobs holds the base's knowledge files and their blobs, and
	// dirtyBase whether the knowledge read differs, once the comparison
	// is done.
	baseBlobs map[string]string
	dirtyBase bool

	builders chan *segmentBuilder // idle builders, keeping their memory
	// keeping says the ice parts of the batches are kept in memory, to be
	// written as one segment at the end (joinKept); keptChunks and
	// keptBytes count their chunks and their documents' bytes.
	keeping               bool
	keptChunks, keptBytes int
	// left is how many documents are yet to come; added and addedChunks
	// count those added so far and their chunks.
	left, added, addedChunks int
	batch                    *batch
	batches                  []*batch
	nextSeg                  uint64
	writers                  errgroup.Group
	writerSlot               chan struct{}
}

// batch is the documents of one segment.
type batch struct {
	seg    uint64
	docs   []*document
	chunks int
	bytes  int
	// meta is filled in by the segment builder: the documents with their
	// chunk and term counts.
	meta []artifact.Document
	// keep says the segment builder leaves the batch's ice part in part
	// rather than writing its segment file; done is closed when the
	// builder is through.
	keep bool
	part *icePart
	done chan struct{}
}

// segmentBuilder is what builds a segment, kept from one to the next: the
// field builder's vocabulary and the postings lists' memory serve again.
type segmentBuilder struct {
	fields   *fieldBuilder
	postings *postings.Writer
}

// parsed is a document after the parallel stage.
type parsed struct {
	doc     *document
	display string
	reindex bool // false: read for the checks between documents only
}

func (b *indexBuild) run(ctx context.Context, l *listing) (*artifact.Manifest, error) {
	shadow := shadowing(l.docs)
	if b.opts.Base == nil {
		// Nothing to compare with: the blobs listed and read are not kept
		// (at 92,000 documents, two maps of 5 MB held through the build).
		l.files = nil
	} else {
		b.blobs = make(map[string]string)
	}
	b.writerSlot = make(chan struct{}, b.opts.Workers)
	b.builders = make(chan *segmentBuilder, b.opts.Workers)
	b.nextSeg = 1

	todo, reindex := l.docs, map[string]bool(nil)
	if b.prev != nil {
		var why string
		todo, reindex, why = b.prev.plan(l, shadow)
		switch {
		case why != "":
			b.prev = nil // too much changed: a full build is cheaper and compacts
			b.res.FullReason = why
			todo = l.docs
		case len(todo) == 0 && len(b.prev.m.Documents) == len(l.docs) && slices.Equal(b.prev.m.Attachments, l.attachmentPaths()):
			// Nothing changed: the index stays; only the manifest is new.
			b.res.Incremental, b.res.Reused = true, len(b.prev.m.Documents)
			m := b.manifest(b.prev.m.Documents, b.prev.m.Attachments)
			m.Index, m.Embeddings = b.prev.m.Index, b.prev.m.Embeddings
			return m, b.finish(ctx, m, l)
		default:
			b.res.Incremental = true
			b.nextSeg = b.prev.nextSegment()
		}
	}
	b.keeping = b.prev == nil && len(todo) <= keepDocs
	done := 0
	parse := func(c candidate) (parsed, error) {
		d, err := l.readAndParse(c, &b.opts.Options)
		if err != nil {
			return parsed{}, err
		}
		d.ShadowedBy = shadow[c.path()]
		p := parsed{doc: d, display: c.display(), reindex: reindex == nil || reindex[c.path()]}
		if !p.reindex && !b.prev.unchanged(d) {
			p.reindex = true // its blob was not known before reading
		}
		return p, nil
	}
	sink := func(p parsed) error {
		done++
		b.left = len(todo) - done
		if b.opts.Progress != nil {
			b.opts.Progress(done, len(todo))
		}
		if p.doc.generated {
			// Left out: what the previous artifact held at its path goes.
			if b.prev != nil {
				b.prev.stale[p.doc.Path] = true
			}
			return nil
		}
		if b.blobs != nil && l.files[p.doc.Path] != p.doc.Blob {
			// Only where reading told more than the listing: a blob
			// unknown until the file was read, or changed since.
			b.blobs[p.doc.Path] = p.doc.Blob
		}
		if f := factsOf(p.doc, p.display); b.prev != nil || f.Checked() {
			// An update keeps every document's, as what it read replaces
			// what the previous artifact recorded.
			b.facts = append(b.facts, f)
		}
		if !p.reindex {
			return nil
		}
		if b.prev != nil {
			b.prev.stale[p.doc.Path] = true
		}
		b.res.Diagnostics = append(b.res.Diagnostics, p.doc.diags...)
		if p.doc.failed() {
			b.failed = b.failed || !b.opts.KeepGoing
			b.res.Skipped++
			return nil
		}
		b.keepTexts(p.doc)
		b.add(p.doc)
		return nil
	}
	err := orderedMap(ctx, todo, b.opts.Workers, 4*b.opts.Workers, parse, sink)
	if err == nil {
		b.flush()
		b.compareBase(l) // every blob is known now
	}
	if werr := b.writers.Wait(); err == nil {
		err = werr
	}
	if err != nil {
		return nil, err
	}
	return b.assemble(ctx, l)
}

// assemble checks between documents, then merges the segments written
// and the kept ones into the index, its snapshot, vectors and manifest.
func (b *indexBuild) assemble(ctx context.Context, l *listing) (*artifact.Manifest, error) {
	// What follows holds every document's metadata, and merges segments:
	// the memory of the segment builders and of the checks between
	// documents goes first, as it counts against the build's peak.
	b.builders = nil
	cross, failed := checks.Cross(b.facts, l.attachments, b.opts.budgets())
	var prevDocs map[string]artifact.Document
	if b.prev != nil {
		prevDocs = make(map[string]artifact.Document)
		for p, d := range b.prev.docs {
			if len(d.Supersedes)+len(d.Contradicts) > 0 || d.Status != "" || d.Kind == knowledge.KindMemory {
				prevDocs[p] = *d // what the check needs: references and ids
			}
		}
	}
	sup := superseders(l, b.facts, prevDocs)
	refs := append(checks.Supersession(sup), checks.Disputes(sup)...)
	// A document whose references are in error is left out with the
	// others in error (--keep-going).
	display := make(map[string]string)
	for _, s := range sup {
		display[s.Display] = s.Path
	}
	for _, d := range refs {
		if p, ok := display[d.Path]; ok && d.Severity == Error {
			failed[p] = true
		}
	}
	cross = append(cross, refs...)
	b.facts = nil
	b.res.Diagnostics = append(b.res.Diagnostics, cross...)
	if b.res.Diagnostics.Errors() > 0 && !b.opts.KeepGoing {
		return nil, ErrInvalid
	}

	docs, deleted := b.documents(l)
	if b.opts.KeepGoing {
		docs = b.dropFailed(docs, failed, deleted)
	}
	finish := b.startFinish(ctx, docs, l)
	m, err := b.index(ctx, l, docs, deleted)
	if err != nil {
		finish(nil)
		return nil, err
	}
	return m, finish(m)
}

// index merges the segments of docs into the index, and writes its
// snapshot and vectors.
func (b *indexBuild) index(ctx context.Context, l *listing, docs []artifact.Document, deleted map[uint64]*roaring.Bitmap) (*artifact.Manifest, error) {
	segs, err := b.segments(docs, deleted)
	if err != nil {
		return nil, err
	}
	if b.keeping && len(deleted) > 0 {
		// Chunks to leave out: ice's merge does that.
		b.keeping = false
		for _, bt := range b.batches {
			if err := bt.writeKept(b.dir); err != nil {
				return nil, err
			}
		}
	}
	if b.keeping {
		segs, err = b.joinKept(docs)
	} else {
		segs, err = b.merge(segs, docs)
	}
	if err != nil {
		return nil, err
	}
	if err := b.syncUnmerged(segs); err != nil {
		return nil, err
	}
	snapshot, err := writeSnapshot(b.dir, b.nextSeg, segs)
	if err != nil {
		return nil, err
	}
	b.res.Indexed = len(docs) - b.res.Reused
	m := b.manifest(docs, l.attachmentPaths())
	if err := b.writeVectors(ctx, m); err != nil {
		return nil, err
	}
	m.Index = indexName(m, b.nextSeg, snapshot)
	return m, nil
}

// finish records in m whether the build is dirty and when each document
// last changed.
func (b *indexBuild) finish(ctx context.Context, m *artifact.Manifest, l *listing) error {
	return b.startFinish(ctx, m.Documents, l)(m)
}

// startFinish starts comparing the knowledge read with the base commit's
// and reading when each of docs last changed, beside the rest of the
// build: the merge, the manifest and the vectors, which neither needs.
// What they find goes into docs and m when the function it returns is
// called, which waits for them; it is called once, or the build stops.
func (b *indexBuild) startFinish(ctx context.Context, docs []artifact.Document, l *listing) func(m *artifact.Manifest) error {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	var ages []docAge
	go func() {
		err := b.markDirtyBase(l)
		if err == nil {
			ages, err = b.readAges(ctx, docs)
		}
		done <- err
	}()
	return func(m *artifact.Manifest) error {
		if m == nil { // the build stopped
			cancel()
			<-done
			return nil
		}
		defer cancel()
		if err := <-done; err != nil {
			return err
		}
		for i, a := range ages {
			d := &docs[i]
			d.Commit, d.Author, d.Updated, d.Uncommitted = a.commit, a.author, a.updated, a.uncommitted
		}
		if b.opts.Base != nil {
			m.Source.Dirty = b.dirtyBase
			if b.dirtyBase && !b.opts.DirtyBuiltAt.IsZero() {
				m.BuiltAt = b.opts.DirtyBuiltAt.UTC()
			}
		}
		return nil
	}
}

// docAge is what a document's record says of its last change.
type docAge struct {
	commit, author, updated string
	uncommitted             bool
}

// readAges returns, for each of docs, the commit that last changed its
// file along the first-parent history of the source's commit, or that
// the file read is not committed; nil when the build reads no history.
// An update reads history back to the previous artifact's commit only:
// documents unchanged since then keep what it recorded. docs are read,
// not written: the rest of the build reads them meanwhile.
func (b *indexBuild) readAges(ctx context.Context, docs []artifact.Document) ([]docAge, error) {
	if b.opts.History == nil {
		return nil, nil
	}
	commit := b.opts.Source.Commit
	prevCommit := ""
	if b.prev != nil {
		prevCommit = b.prev.m.Source.Commit
	}
	// A document an update kept is the previous artifact's, with what
	// that build recorded; one it compiled again has nothing recorded.
	ages := make([]docAge, len(docs))
	pending := make(map[string]int)
	for i := range docs {
		d := &docs[i]
		global := strings.HasPrefix(d.Path, knowledge.GlobalPathPrefix)
		// A rev build reads the commit itself; the others, the working
		// tree or the index, whose files may differ from it.
		if global || commit == "" || b.opts.Base != nil && b.baseBlobs[d.Path] != d.Blob {
			ages[i].uncommitted = !global
			continue
		}
		ages[i] = docAge{commit: d.Commit, author: d.Author, updated: d.Updated}
		pending[d.Path] = i
	}
	defer func() {
		for _, i := range pending { // no commit of the history read changed it
			ages[i] = docAge{}
		}
	}()
	if len(pending) == 0 {
		return ages, nil
	}
	for c, err := range b.opts.History(commit) {
		if err != nil {
			return nil, fmt.Errorf("read the history of %s: %w", commit, err)
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if c.Hash == prevCommit {
			// What changed since the previous build is behind; the rest
			// is as that build found it.
			for p, i := range pending {
				if ages[i].commit != "" {
					delete(pending, p)
				}
			}
		}
		for _, p := range c.Changed {
			if i, ok := pending[p]; ok {
				ages[i] = docAge{commit: c.Hash, author: c.Author, updated: c.Time.UTC().Format(time.RFC3339)}
				delete(pending, p)
			}
		}
		if len(pending) == 0 {
			break
		}
	}
	return ages, nil
}

// compareBase starts comparing the knowledge read with the base commit's,
// beside the rest of the build, unless it has started.
func (b *indexBuild) compareBase(l *listing) {
	if b.opts.Base == nil || b.dirtyc != nil {
		return
	}
	b.dirtyc = make(chan dirtyResult, 1)
	go func() {
		dirty, err := b.dirty(l)
		b.dirtyc <- dirtyResult{dirty, err}
	}()
}

type dirtyResult struct {
	dirty bool
	err   error
}

// markDirtyBase waits for the comparison with the base commit and keeps
// whether the knowledge read differs in dirtyBase.
func (b *indexBuild) markDirtyBase(l *listing) error {
	if b.opts.Base == nil {
		return nil
	}
	b.compareBase(l)
	r := <-b.dirtyc
	b.dirtyBase = r.dirty
	return r.err
}

// add queues a document for the current segment.
func (b *indexBuild) add(d *document) {
	if b.failed {
		return
	}
	if b.batch == nil {
		b.batch = &batch{seg: b.nextSeg}
		b.nextSeg++
	}
	bt := b.batch
	// Placement is set here, before the batch goes to a segment builder.
	d.Document.Seg, d.Document.Doc = bt.seg, uint32(bt.chunks)
	bt.docs = append(bt.docs, d)
	bt.chunks += len(d.chunks)
	bt.bytes += len(d.src.Data)
	b.added++
	b.addedChunks += len(d.chunks)
	if bt.chunks >= b.batchLimit() || bt.bytes >= batchBytes {
		b.flush()
	}
}

// batchLimit is the most chunks the current batch takes: batchChunks, and
// a quarter of that once the documents yet to come hold less than two
// batches (as many chunks a document as so far), so that the batches still
// being built when the last document is read have little left to do.
func (b *indexBuild) batchLimit() int {
	if b.added > 0 && b.left*b.addedChunks/b.added < 2*batchChunks {
		return batchChunks / 4
	}
	return batchChunks
}

// flush builds the queued documents into a segment, on a goroutine of its
// own when a slot is free.
func (b *indexBuild) flush() {
	bt := b.batch
	if bt == nil || b.failed {
		return
	}
	b.batch = nil
	b.batches = append(b.batches, bt)
	bt.done = make(chan struct{})
	if bt.keep = b.keeping && bt.chunks > 0 && b.keptChunks+bt.chunks <= keepChunks && b.keptBytes+bt.bytes <= keepBytes; bt.keep {
		b.keptChunks += bt.chunks
		b.keptBytes += bt.bytes
	} else if b.keeping {
		b.writeKept() // more than one segment's worth: each is written
	}
	b.writerSlot <- struct{}{}
	b.writers.Go(func() error {
		defer func() { <-b.writerSlot }()
		defer close(bt.done)
		var sb *segmentBuilder
		select {
		case sb = <-b.builders:
			sb.postings.Reset()
			sb.fields.nextSegment()
		default:
			sb = &segmentBuilder{newFieldBuilder(b.opts.Analysis), postings.NewWriter()}
		}
		defer func() {
			select {
			case b.builders <- sb:
			default:
			}
		}()
		chunks := make([]segment.Document, 0, bt.chunks)
		// Kept to the end of the build: sized, not grown by doubling.
		bt.meta = make([]artifact.Document, 0, len(bt.docs))
		for _, d := range bt.docs {
			chunks = indexDocument(d, sb.fields, chunks, sb.postings)
			bt.meta = append(bt.meta, d.Document)
		}
		bt.docs = nil
		if !bt.keep {
			return writeSegment(b.dir, bt.seg, chunks, sb.postings)
		}
		if err := writePostings(b.dir, bt.seg, sb.postings); err != nil {
			return err
		}
		part, err := keepPart(chunks)
		bt.part = part
		return err
	})
}

// writeKept stops keeping the batches' ice parts: those kept are written
// as their segments' files, once encoded.
func (b *indexBuild) writeKept() {
	b.keeping = false
	for _, bt := range b.batches {
		if bt.keep {
			b.writers.Go(func() error {
				<-bt.done
				return bt.writeKept(b.dir)
			})
		}
	}
}

// writeKept writes the segment file of a batch whose ice part was kept.
func (bt *batch) writeKept(dir string) error {
	if !bt.keep || bt.part == nil {
		return nil
	}
	part := bt.part
	bt.keep, bt.part = false, nil
	return writeIcePart(dir, bt.seg, part)
}

// syncUnmerged syncs the segments of this build that no merge took in.
func (b *indexBuild) syncUnmerged(segs []artifact.SnapshotSegment) error {
	written := make(map[uint64]bool, len(b.batches))
	for _, bt := range b.batches {
		written[bt.seg] = true
	}
	var g errgroup.Group
	g.SetLimit(max(b.opts.Workers, 1))
	for _, s := range segs {
		if written[s.ID] {
			g.Go(func() error { return syncSegment(b.dir, s.ID) })
		}
	}
	return g.Wait()
}

// documents lists the documents of the new index in path order, and the
// chunks of the previous index that must be deleted, by segment.
func (b *indexBuild) documents(l *listing) ([]artifact.Document, map[uint64]*roaring.Bitmap) {
	deleted := make(map[uint64]*roaring.Bitmap)
	n := 0
	for _, bt := range b.batches {
		n += len(bt.meta)
	}
	fresh := make([]artifact.Document, 0, n)
	for _, bt := range b.batches {
		fresh = append(fresh, bt.meta...)
		bt.meta = nil
	}
	byPath := func(x, y artifact.Document) int { return cmp.Compare(x.Path, y.Path) }
	if !slices.IsSortedFunc(fresh, byPath) { // batches follow the listing's order
		slices.SortFunc(fresh, byPath)
	}
	if b.prev == nil {
		return fresh, deleted
	}
	indexed := make(map[string]bool, len(fresh))
	for _, d := range fresh {
		indexed[d.Path] = true
	}
	prev := b.prev.m.Documents
	keep := listed(l.docs, prev)
	for i, d := range prev {
		if keep[i] && !indexed[d.Path] && !b.prev.stale[d.Path] {
			b.res.Reused++
			continue
		}
		keep[i] = false
		markDeleted(deleted, d.Seg, d.Doc, uint32(d.Chunks))
	}
	// The kept documents are compacted in place, in the previous manifest's
	// memory (fresh memory costs a page fault per 4 KiB, and the manifest
	// is not read again), then the fresh ones merged in from the back.
	kept := prev[:0]
	for i, d := range prev {
		if keep[i] {
			kept = append(kept, d)
		}
	}
	b.prev.m.Documents, b.prev.docs = nil, nil
	if !slices.IsSortedFunc(kept, byPath) { // a manifest not written by kbc
		slices.SortFunc(kept, byPath)
	}
	return mergeDocuments(kept, fresh), deleted
}

// mergeDocuments merges fresh into kept, both in path order and without a
// path in common, reusing kept's memory when it has room.
func mergeDocuments(kept, fresh []artifact.Document) []artifact.Document {
	docs := slices.Grow(kept, len(fresh))[:len(kept)+len(fresh)]
	// From the back, the write position never passes the next document of
	// kept still to be read.
	i, j := len(kept)-1, len(fresh)-1
	for w := len(docs) - 1; j >= 0; w-- {
		if i >= 0 && docs[i].Path > fresh[j].Path {
			docs[w] = docs[i]
			i--
		} else {
			docs[w] = fresh[j]
			j--
		}
	}
	return docs
}

// listed reports, for each of docs, whether the listing holds its path.
// The listing is in path order, and so are a built manifest's documents:
// they are merged in one pass. A map serves for documents out of order.
func listed(cands []candidate, docs []artifact.Document) []bool {
	out := make([]bool, len(docs))
	if slices.IsSortedFunc(docs, func(x, y artifact.Document) int { return cmp.Compare(x.Path, y.Path) }) {
		j := 0
		for i, d := range docs {
			for j < len(cands) && cands[j].path() < d.Path {
				j++
			}
			out[i] = j < len(cands) && cands[j].path() == d.Path
		}
		return out
	}
	paths := make(map[string]bool, len(cands))
	for _, c := range cands {
		paths[c.path()] = true
	}
	for i, d := range docs {
		out[i] = paths[d.Path]
	}
	return out
}

func markDeleted(deleted map[uint64]*roaring.Bitmap, seg uint64, first, n uint32) {
	if n == 0 {
		return
	}
	if deleted[seg] == nil {
		deleted[seg] = roaring.New()
	}
	deleted[seg].AddRange(uint64(first), uint64(first+n))
}

// dropFailed leaves out the documents that failed the checks between
// documents, deleting their chunks, and turns all errors into warnings.
func (b *indexBuild) dropFailed(docs []artifact.Document, failed map[string]bool, deleted map[uint64]*roaring.Bitmap) []artifact.Document {
	for i, d := range b.res.Diagnostics {
		if d.Severity == Error {
			b.res.Diagnostics[i].Severity = Warning
			b.res.Diagnostics[i].Message += " (file skipped: --keep-going)"
		}
	}
	if len(failed) == 0 {
		return docs
	}
	return slices.DeleteFunc(docs, func(d artifact.Document) bool {
		if !failed[d.Path] {
			return false
		}
		markDeleted(deleted, d.Seg, d.Doc, uint32(d.Chunks))
		b.res.Skipped++
		return true
	})
}

// segments lists the segments of the new index: the previous index's still
// holding live chunks, linked into the new directory, then the new ones.
func (b *indexBuild) segments(docs []artifact.Document, deleted map[uint64]*roaring.Bitmap) ([]artifact.SnapshotSegment, error) {
	var segs []artifact.SnapshotSegment
	if b.prev != nil {
		live := make(map[uint64]bool)
		for _, d := range docs {
			live[d.Seg] = true
		}
		kept, err := b.prev.link(b.dir, live, deleted)
		if err != nil {
			return nil, err
		}
		segs = kept
	}
	for _, bt := range b.batches {
		segs = append(segs, artifact.SnapshotSegment{ID: bt.seg, Deleted: deleted[bt.seg]})
	}
	return segs, nil
}
