package compiler

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/RoaringBitmap/roaring"
	segment "github.com/blugelabs/bluge_segment_api"
	"golang.org/x/sync/errgroup"

	"github.com/kbqdev/kbq/artifact"
	"github.com/kbqdev/kbq/gitsource"
	"github.com/kbqdev/kbq/internal/version"
)

// Version is the compiler's version, recorded in every manifest.
const Version = version.Version

// DefaultMaxFileSize is the default size cap of a knowledge file.
const DefaultMaxFileSize = 5 << 20

// ErrInvalid means validation found errors; the diagnostics say which.
var ErrInvalid = errors.New("knowledge has errors")

// Options configure what the compiler reads.
type Options struct {
	// ContextFiles are the agent context file names picked up outside .kb/
	// directories; nil means DefaultContextFiles.
	ContextFiles []string
	// MaxFileSize caps the size of a knowledge file; 0 means the default.
	MaxFileSize int64
	// Global is the global scope, or nil to leave it out.
	Global *Global
	// Workers is the number of goroutines parsing and indexing; 0 means one
	// per CPU.
	Workers int
}

func (o *Options) defaults() {
	if o.ContextFiles == nil {
		o.ContextFiles = DefaultContextFiles
	}
	if o.MaxFileSize <= 0 {
		o.MaxFileSize = DefaultMaxFileSize
	}
	if o.Workers <= 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
}

// BuildOptions configure a build.
type BuildOptions struct {
	Options
	// Out is the artifact directory.
	Out string
	// Source describes what src holds, for the manifest.
	Source artifact.Source
	// BuiltAt is recorded in the manifest.
	BuiltAt time.Time
	// KeepGoing leaves out documents with errors instead of failing.
	KeepGoing bool
	// Base, when set, is the commit the source is compared with to decide
	// whether the build is dirty: built from knowledge that is not
	// committed.
	Base Source
	// DirtyBuiltAt, when set, replaces BuiltAt in a dirty build.
	DirtyBuiltAt time.Time
	// Progress, when set, is called as documents are compiled.
	Progress func(done, total int)
}

// BuildResult reports a build.
type BuildResult struct {
	Manifest    *artifact.Manifest
	Diagnostics Diagnostics
	Indexed     int // documents read and indexed by this build
	Skipped     int // documents left out for errors (KeepGoing)
}

// Build validates the knowledge in src and compiles it into the artifact
// directory opts.Out. On validation errors it returns ErrInvalid with the
// diagnostics, unless opts.KeepGoing, and leaves any previous artifact as it
// was.
func Build(ctx context.Context, src Source, opts BuildOptions) (*BuildResult, error) {
	opts.defaults()
	l, err := collect(src, opts.Global, opts.ContextFiles)
	if err != nil {
		return nil, err
	}
	res := &BuildResult{Diagnostics: l.diags}
	err = publish(opts.Out, func(dir string) (*artifact.Manifest, error) {
		ib := &indexBuild{dir: dir, opts: opts, res: res}
		m, err := ib.run(ctx, l)
		res.Manifest = m
		return m, err
	})
	res.Diagnostics.Sort()
	if err != nil {
		return res, err
	}
	return res, nil
}

// Segment batches: a segment is built in memory, so these bound the memory
// a build needs, whatever the size of the corpus.
const (
	batchChunks = 2048
	batchBytes  = 24 << 20
)

// indexBuild compiles documents into segments of one index directory.
type indexBuild struct {
	dir  string
	opts BuildOptions
	res  *BuildResult

	facts  []docFacts
	place  map[string]placement
	failed bool // an error was found; stop writing segments

	batch      *batch
	batches    []*batch
	nextSeg    uint64
	writers    errgroup.Group
	writerSlot chan struct{}
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
}

// placement is where a document's chunks went: segment and doc numbers.
type placement struct {
	seg      uint64
	first, n uint32
}

// parsed is a document after the parallel stage.
type parsed struct {
	doc     *document
	display string
}

func (b *indexBuild) run(ctx context.Context, l *listing) (*artifact.Manifest, error) {
	shadow := shadowing(l.docs)
	b.place = make(map[string]placement)
	b.writerSlot = make(chan struct{}, b.opts.Workers)
	b.nextSeg = 1
	done := 0
	parse := func(c candidate) (parsed, error) {
		d, err := readAndParse(c, b.opts.MaxFileSize)
		if err != nil {
			return parsed{}, err
		}
		d.ShadowedBy = shadow[c.path]
		return parsed{doc: d, display: c.display}, nil
	}
	sink := func(p parsed) error {
		done++
		if b.opts.Progress != nil {
			b.opts.Progress(done, len(l.docs))
		}
		b.res.Diagnostics = append(b.res.Diagnostics, p.doc.diags...)
		b.facts = append(b.facts, factsOf(p.doc, p.display))
		if p.doc.failed() {
			b.failed = b.failed || !b.opts.KeepGoing
			b.res.Skipped++
			return nil
		}
		b.add(p.doc)
		return nil
	}
	err := orderedMap(ctx, l.docs, b.opts.Workers, 4*b.opts.Workers, parse, sink)
	if err == nil {
		b.flush()
	}
	if werr := b.writers.Wait(); err == nil {
		err = werr
	}
	if err != nil {
		return nil, err
	}
	cross, failed := crossCheck(b.facts, l.attachments)
	b.res.Diagnostics = append(b.res.Diagnostics, cross...)
	if b.res.Diagnostics.Errors() > 0 && !b.opts.KeepGoing {
		return nil, ErrInvalid
	}
	segs := make([]snapshotSegment, len(b.batches))
	for i, bt := range b.batches {
		segs[i].id = bt.seg
	}
	docs := b.documents()
	if b.opts.KeepGoing {
		docs = b.dropFailed(docs, failed, segs)
	}
	if err := writeSnapshot(b.dir, b.nextSeg, segs); err != nil {
		return nil, err
	}
	b.res.Indexed = len(docs)
	m := b.manifest(docs)
	if b.opts.Base != nil {
		dirty, err := b.dirty(l)
		if err != nil {
			return nil, err
		}
		m.Source.Dirty = dirty
		if dirty && !b.opts.DirtyBuiltAt.IsZero() {
			m.BuiltAt = b.opts.DirtyBuiltAt.UTC()
		}
	}
	return m, nil
}

// dirty reports whether the knowledge files read differ from the base's.
func (b *indexBuild) dirty(l *listing) (bool, error) {
	base, err := collect(b.opts.Base, nil, b.opts.ContextFiles)
	if err != nil {
		return false, fmt.Errorf("read base for comparison: %w", err)
	}
	current := maps.Clone(l.files)
	for _, f := range b.facts {
		if !strings.HasPrefix(f.path, artifact.GlobalPathPrefix) {
			current[f.path] = f.blob
		}
	}
	if len(current) != len(base.files) {
		return true, nil
	}
	for p, blob := range current {
		if blob == "" || base.files[p] != blob {
			return true, nil
		}
	}
	return false, nil
}

// readAndParse reads a candidate and parses it. Only I/O failures are
// errors; problems with the file are diagnostics of the document.
func readAndParse(c candidate, maxSize int64) (*document, error) {
	data, err := c.src.Read(c.file, maxSize)
	if errors.Is(err, gitsource.ErrTooLarge) {
		d := &document{Document: artifact.Document{Path: c.path, Scope: c.loc.scope, Kind: c.loc.kind, Topic: c.loc.topic, Blob: c.blob}}
		d.diags = Diagnostics{{Path: c.display, Line: 1, Col: 1, Severity: Error,
			Message: fmt.Sprintf("file is over the %s size cap: split it into smaller documents, or raise the cap with --max-file-size", humanBytes(maxSize))}}
		return d, nil
	}
	if err != nil {
		return nil, err
	}
	in := c.input
	if in.blob == "" {
		in.blob = gitsource.HashBlob(data)
	}
	in.data = data
	return parseDocument(in), nil
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
	b.place[d.Path] = placement{seg: bt.seg, first: uint32(bt.chunks), n: uint32(len(d.chunks))}
	bt.docs = append(bt.docs, d)
	bt.chunks += len(d.chunks)
	bt.bytes += len(d.src.text)
	if bt.chunks >= batchChunks || bt.bytes >= batchBytes {
		b.flush()
	}
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
	b.writerSlot <- struct{}{}
	b.writers.Go(func() error {
		defer func() { <-b.writerSlot }()
		chunks := make([]segment.Document, 0, bt.chunks)
		for _, d := range bt.docs {
			chunks = indexDocument(d, chunks)
			bt.meta = append(bt.meta, d.Document)
		}
		bt.docs = nil
		return writeSegment(b.dir, bt.seg, chunks)
	})
}

// documents lists the indexed documents in path order.
func (b *indexBuild) documents() []artifact.Document {
	var docs []artifact.Document
	for _, bt := range b.batches {
		docs = append(docs, bt.meta...)
	}
	return docs
}

// dropFailed marks the chunks of documents that failed the checks between
// documents as deleted, and turns all errors into warnings.
func (b *indexBuild) dropFailed(docs []artifact.Document, failed map[string]bool, segs []snapshotSegment) []artifact.Document {
	for i, d := range b.res.Diagnostics {
		if d.Severity == Error {
			b.res.Diagnostics[i].Severity = Warning
			b.res.Diagnostics[i].Message += " (file skipped: --keep-going)"
		}
	}
	if len(failed) == 0 {
		return docs
	}
	deleted := make(map[uint64]*roaring.Bitmap)
	docs = slices.DeleteFunc(docs, func(d artifact.Document) bool {
		if !failed[d.Path] {
			return false
		}
		p := b.place[d.Path]
		if deleted[p.seg] == nil {
			deleted[p.seg] = roaring.New()
		}
		deleted[p.seg].AddRange(uint64(p.first), uint64(p.first+p.n))
		b.res.Skipped++
		return true
	})
	for i := range segs {
		segs[i].deleted = deleted[segs[i].id]
	}
	return docs
}

// manifest describes the built index.
func (b *indexBuild) manifest(docs []artifact.Document) *artifact.Manifest {
	m := &artifact.Manifest{
		Format: artifact.Format, FormatVersion: artifact.FormatVersion, CompilerVersion: Version,
		Source: b.opts.Source, BuiltAt: b.opts.BuiltAt.UTC(), Analysis: artifact.DefaultAnalysis,
		Counts: artifact.Counts{ByKind: map[string]int{}, ByScope: map[string]int{}},
		Fields: map[string]artifact.FieldStats{}, Documents: docs,
	}
	if m.Documents == nil {
		m.Documents = []artifact.Document{}
	}
	globalHash := sha256.New()
	shadowing := make(map[string]bool)
	for _, d := range docs {
		for _, s := range d.ShadowedBy {
			shadowing[s] = true
		}
		m.Counts.Documents++
		m.Counts.Chunks += d.Chunks
		m.Counts.ByKind[d.Kind]++
		m.Counts.ByScope[d.Scope]++
		for f, s := range d.Fields {
			m.Fields[f] = m.Fields[f].Add(s)
		}
		if d.Scope == artifact.ScopeGlobal {
			fmt.Fprintf(globalHash, "%s\x00%s\n", d.Path, d.Blob)
		}
	}
	m.Counts.Shadowing = slices.Sorted(maps.Keys(shadowing))
	if b.opts.Global != nil {
		m.Global = artifact.Global{Included: true, Hash: hex.EncodeToString(globalHash.Sum(nil))}
	}
	m.Index = "index-" + contentKey(m)[:16]
	return m
}

// contentKey identifies what an index holds: the same documents compiled by
// the same compiler give the same key, however they were built. Version
// must change whenever the compiler turns the same documents into
// different index contents.
func contentKey(m *artifact.Manifest) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s %d %s %+v %d/%d/%d %s %d\n", artifact.Format, artifact.FormatVersion, Version, m.Analysis,
		minChunk, maxChunk, maxOverlap, segmentType, segmentVersion)
	for _, d := range m.Documents {
		fmt.Fprintf(h, "%s\x00%s\x00%s\x00%s\x00%s\x00%v\n", d.Path, d.Blob, d.Scope, d.Kind, d.Topic, d.ShadowedBy)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// humanBytes formats a size in the unit that reads best: 5 MiB, 512 KiB.
func humanBytes(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}
