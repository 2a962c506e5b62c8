package compiler

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"iter"
	"maps"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/kbqdev/kbq/artifact"
	"github.com/kbqdev/kbq/compiler/checks"
	"github.com/kbqdev/kbq/gitsource"
	"github.com/kbqdev/kbq/internal/units"
	"github.com/kbqdev/kbq/internal/version"
	"github.com/kbqdev/kbq/knowledge"
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
	// directories; nil means knowledge.DefaultContextFiles.
	ContextFiles []string
	// MaxFileSize caps the size of a knowledge file; 0 means the default.
	MaxFileSize int64
	// Global is the global scope, or nil to leave it out.
	Global *Global
	// Workers is the number of goroutines parsing and indexing; 0 means one
	// per CPU.
	Workers int
	// Analysis is the text analysis chain; the zero value means
	// artifact.DefaultAnalysis.
	Analysis artifact.Analysis
	// Config is the project configuration; nil means the source's own
	// (ConfigPath). The fields above, when set, win over it.
	Config *Config
	// Embedder, when set, embeds every chunk for semantic search.
	Embedder Embedder
	// OpenEmbedder, when set and Embedder is not, opens the embedder of a
	// build once the configuration is read: it is given the embeddings
	// section (nil when there is none) and returns nil for none.
	OpenEmbedder func(*EmbeddingsConfig) (Embedder, error)
}

// Resolve completes o for reading src: it loads src's configuration unless
// o.Config is set, and fills in what neither o nor the configuration sets
// with the defaults. Only I/O failures are errors; problems with the
// configuration are o.Config.Diagnostics.
func (o *Options) Resolve(src Source) error {
	if o.Config == nil {
		c, err := LoadConfig(src)
		if err != nil {
			return err
		}
		o.Config = c
	}
	if o.ContextFiles == nil {
		o.ContextFiles = o.Config.ContextFiles
	}
	if o.MaxFileSize <= 0 {
		o.MaxFileSize = o.Config.MaxFileSize
	}
	o.defaults()
	return nil
}

// budgets are the context budgets in force.
func (o *Options) budgets() artifact.Budgets {
	var b artifact.Budgets
	if o.Config != nil {
		b = o.Config.Budgets
	}
	return b.Or(artifact.DefaultBudgets)
}

// minScore is the configuration's min_score, nil when it says none.
func (o *Options) minScore() *float64 {
	if o.Config == nil {
		return nil
	}
	return o.Config.MinScore
}

// orgScopes are the org scopes the configuration names.
func (o *Options) orgScopes() []string {
	if o.Config == nil {
		return nil
	}
	return o.Config.Org
}

func (o *Options) defaults() {
	if o.Config == nil {
		o.Config = &Config{}
	}
	if o.ContextFiles == nil {
		o.ContextFiles = knowledge.DefaultContextFiles
	}
	if o.MaxFileSize <= 0 {
		o.MaxFileSize = DefaultMaxFileSize
	}
	if o.Workers <= 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	if o.Analysis == (artifact.Analysis{}) {
		o.Analysis = artifact.DefaultAnalysis
	}
}

// BuildOptions configure a build.
type BuildOptions struct {
	Options
	// Out is the artifact directory.
	Out string
	// Root, when set, is the repository's working tree: no directory
	// between it and Out may be a symbolic link.
	Root string
	// Source describes what src holds, for the manifest.
	Source artifact.Source
	// BuiltAt is recorded in the manifest.
	BuiltAt time.Time
	// KeepGoing leaves out documents with errors instead of failing.
	KeepGoing bool
	// Full compiles every document even when the previous artifact could be
	// updated incrementally.
	Full bool
	// Base, when set, is the commit the source is compared with to decide
	// whether the build is dirty: built from knowledge that is not
	// committed.
	Base Source
	// DirtyBuiltAt, when set, replaces BuiltAt in a dirty build.
	DirtyBuiltAt time.Time
	// History, when set, yields the first-parent history of a commit,
	// newest first: the build records each document's last change along
	// that of Source.Commit.
	History func(commit string) iter.Seq2[gitsource.Commit, error]
	// Progress, when set, is called as documents are compiled.
	Progress func(done, total int)
	// EmbedProgress, when set, is called as chunks are embedded.
	EmbedProgress func(done, total int)
	// ReuseVectors, when set, is another artifact's directory (the working
	// tree's, for kbc publish): where the same model made its vectors, a
	// chunk of the same text copies its vector from there instead of
	// being embedded again.
	ReuseVectors string
}

// BuildResult reports a build.
type BuildResult struct {
	Manifest    *artifact.Manifest
	Diagnostics Diagnostics
	Indexed     int  // documents read and indexed by this build
	Reused      int  // documents kept from the previous artifact
	Skipped     int  // documents left out for errors (KeepGoing)
	Embedded    int  // chunks embedded by this build
	Incremental bool // the previous artifact was updated, not rebuilt
	// FullReason says why a previous artifact was not updated but built
	// anew ("" when it was updated, or there was none).
	FullReason string
}

// Build validates the knowledge in src and compiles it into the artifact
// directory opts.Out. It updates the previous artifact there when it can,
// compiling only documents whose content (or shadowing) changed. On
// validation errors it returns ErrInvalid with the diagnostics, unless
// opts.KeepGoing, and leaves any previous artifact as it was.
//
// Incremental builds report the diagnostics of the documents they compile;
// kbc check reports every document's.
//
// A build reads top to bottom: it begins a publication (the lock, and a
// fresh directory for the index), reads the previous artifact while the
// source is listed, builds the index into that directory, and commits it,
// or aborts on any error.
func Build(ctx context.Context, src Source, opts BuildOptions) (*BuildResult, error) {
	pub, err := beginPublish(opts.Out, opts.Root)
	if err != nil {
		return nil, err
	}
	defer pub.abort()
	// With the lock held: the configuration and the files it shapes.
	if err := opts.Resolve(src); err != nil {
		return nil, err
	}
	// Listing the source and reading the previous artifact are
	// independent: on a large repository each takes a third of an
	// incremental build, so they run side by side, as does loading the
	// embedding model.
	listed := make(chan listedSource, 1)
	go func() { listed <- listSource(src, opts) }()
	prev, why := pub.previous()
	got := <-listed
	if got.err != nil {
		return nil, got.err
	}
	if got.embedder != nil {
		opts.Embedder = got.embedder
	}
	res := &BuildResult{Diagnostics: append(got.l.diags, opts.Config.Diagnostics...)}
	defer res.Diagnostics.Sort()
	if opts.Config.Diagnostics.Errors() > 0 && !opts.KeepGoing {
		return res, ErrInvalid // a wrong setting would build the wrong artifact
	}
	// Vectors are reused by blob even when nothing else is.
	vecPrev := prev
	switch {
	case prev == nil:
	case opts.Full:
		prev, why = nil, "--full"
	case prev.m.BuildKey != buildKey(opts.Options):
		prev, why = nil, fmt.Sprintf("the previous artifact was built by kbc %s or with other settings (%s, analysis, context files, size cap)", prev.m.CompilerVersion, ConfigPath)
	}
	ib := &indexBuild{dir: pub.dir, opts: opts, res: res, prev: prev}
	defer ib.openOldVectors(vecPrev)()
	defer ib.openOtherVectors(opts.ReuseVectors)()
	if prev != nil && opts.Embedder != nil && ib.oldVecs.v == nil {
		// Documents the index reuses are not read again, so their vectors
		// must come from the previous artifact's.
		ib.prev, why = nil, "the previous artifact's vectors could not be read"
	}
	res.FullReason = why
	m, err := ib.run(ctx, got.l)
	res.Manifest = m
	if err != nil {
		return res, err
	}
	// The worktree record is written while the manifest is: it names the
	// index, so whichever lands first misleads no reader.
	recorded := make(chan error, 1)
	go func() { recorded <- recordWorktree(opts.Out, src, got.l, m, &opts.Options) }()
	// The index in place already is this one only when it was checked and
	// kept: a build that ignored it writes every file anew.
	err = pub.commit(m, ib.prev != nil && m.Index == ib.prev.m.Index)
	if rerr := <-recorded; err == nil {
		err = rerr
	}
	return res, err
}

// listedSource is what listSource found.
type listedSource struct {
	l        *listing
	embedder Embedder // opened from the configuration, when opts had none
	err      error
}

// listSource lists src's knowledge files and opens the embedding model
// the configuration names, for Build, with opts resolved.
func listSource(src Source, opts BuildOptions) listedSource {
	var out listedSource
	if opts.Embedder == nil && opts.OpenEmbedder != nil && (opts.Config.Diagnostics.Errors() == 0 || opts.KeepGoing) {
		if out.embedder, out.err = opts.OpenEmbedder(opts.Config.Embeddings); out.err != nil {
			return out
		}
	}
	digestKnowledge(src, opts.ContextFiles)
	out.l, out.err = collect(src, &opts.Options)
	return out
}

// buildKey identifies the settings that shape compiled documents.
func buildKey(o Options) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s %d %s %+v %v %d %d/%d/%d/%d/%d %d %s\n", artifact.Format, artifact.FormatVersion, Version,
		o.Analysis, o.ContextFiles, o.MaxFileSize, minChunk, maxChunk, maxOverlap, maxHeadingText, maxTitle, artifact.DocumentLayout, o.Config.Hash)
	if o.Embedder != nil {
		id := o.Embedder.Identity()
		fmt.Fprintf(h, "embeddings %s %s %s %s %d\n", id.Provider, id.Model, id.Hash, id.URL, id.Dims)
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// readAndParse reads a candidate and parses it. Only I/O failures are
// errors; problems with the file are diagnostics of the document.
func (l *listing) readAndParse(c candidate, opts *Options) (*document, error) {
	maxSize := opts.MaxFileSize
	src, paths := l.src, l.paths // the global scope's references are not checked
	if c.global != nil {
		src, paths = l.global, nil
	}
	data, err := src.Read(c.file, maxSize)
	if errors.Is(err, gitsource.ErrTooLarge) {
		d := &document{Document: artifact.Document{Path: c.path(), Scope: c.loc.Scope, Kind: c.loc.Kind, Topic: c.loc.Topic, Blob: c.blob()}}
		d.diags = Diagnostics{{Path: c.display(), Line: 1, Col: 1, Severity: Error,
			Message: fmt.Sprintf("file is over the %s size cap: split it into smaller documents, or raise the cap (max_file_size in "+ConfigPath+", or --max-file-size)", units.Bytes(maxSize))}}
		return d, nil
	}
	if err != nil {
		return nil, err
	}
	in := input{path: c.path(), display: c.display(), blob: c.blob(), loc: c.loc, paths: paths}
	if in.blob == "" {
		in.blob = gitsource.HashBlob(data)
	}
	in.data = data
	if !strings.HasPrefix(c.path(), knowledge.GlobalPathPrefix) {
		in.secrets = opts.Config.secretsAllowedIn(c.path())
		if opts.Config != nil {
			in.foreign = opts.Config.ForeignKeys
		}
	}
	return parseDocument(in), nil
}

// manifest describes a built index holding docs, in path order.
func (b *indexBuild) manifest(docs []artifact.Document, attachments []string) *artifact.Manifest {
	m := &artifact.Manifest{
		Format: artifact.Format, FormatVersion: artifact.FormatVersion, CompilerVersion: Version,
		BuildKey: buildKey(b.opts.Options), Source: b.opts.Source, BuiltAt: b.opts.BuiltAt.UTC(),
		Analysis: b.opts.Analysis, Config: artifact.Config{Hash: b.opts.Config.Hash, Budgets: b.opts.budgets(), Org: b.opts.orgScopes(), MinScore: b.opts.minScore()}, Counts: artifact.Counts{ByKind: map[string]int{}, ByScope: map[string]int{}},
		Fields: map[string]artifact.FieldStats{}, Documents: docs, Attachments: attachments,
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
		for i, f := range artifact.TextFields {
			m.Fields[f] = m.Fields[f].Add(d.Fields[i])
		}
		if d.Scope == knowledge.ScopeGlobal {
			fmt.Fprintf(globalHash, "%s\x00%s\n", d.Path, d.Blob)
		}
	}
	m.Counts.Shadowing = slices.Sorted(maps.Keys(shadowing))
	m.Retired = checks.Retired(docs)
	m.Disputed = checks.Disputed(docs, m.Retired)
	for _, d := range docs {
		if d.Status != "" {
			if m.Statuses == nil {
				m.Statuses = make(map[string]string)
			}
			m.Statuses[d.Path] = d.Status
		}
	}
	if b.opts.Global != nil {
		m.Global = artifact.Global{Included: true, Hash: hex.EncodeToString(globalHash.Sum(nil))}
	}
	return m
}

// indexName names the index directory of m, whose snapshot epoch holds
// snapshot: from what it holds and where. A full build of the same source
// gets the same name; an index with the same documents placed differently
// (an incremental build) gets another, so a manifest never names an index
// laid out otherwise.
func indexName(m *artifact.Manifest, epoch uint64, snapshot []byte) string {
	h := sha256.New()
	io.WriteString(h, contentKey(m))
	buf := make([]byte, 0, 64<<10)
	for _, d := range m.Documents {
		buf = binary.AppendUvarint(buf, d.Seg)
		buf = binary.AppendUvarint(buf, uint64(d.Doc))
		if len(buf) > 60<<10 {
			h.Write(buf)
			buf = buf[:0]
		}
	}
	buf = binary.AppendUvarint(buf, epoch)
	h.Write(buf)
	h.Write(snapshot)
	return "index-" + hex.EncodeToString(h.Sum(nil))[:16]
}

// contentKey identifies what an index holds: the same documents compiled by
// the same compiler give the same key, however they were built.
func contentKey(m *artifact.Manifest) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s %s %s %d\n", m.BuildKey, m.Analysis, artifact.SegmentType, artifact.SegmentVersion)
	// The line of each document is what fmt's "%s\x00…%v\n" wrote, appended
	// by hand: fmt took a tenth of a one-file build at 12,000 documents.
	var line []byte
	for _, d := range m.Documents {
		line = line[:0]
		for _, s := range []string{d.Path, d.Blob, d.Scope, d.Kind, d.Topic} {
			line = append(append(line, s...), 0)
		}
		line = append(line, '[')
		for i, s := range d.ShadowedBy {
			if i > 0 {
				line = append(line, ' ')
			}
			line = append(line, s...)
		}
		h.Write(append(line, "]\n"...))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// dirty reports whether the knowledge files read differ from the base's.
func (b *indexBuild) dirty(l *listing) (bool, error) {
	// A document read has the blob it was read with; any other was listed
	// with the blob the previous artifact built it from (a listed blob
	// that was unknown or different had it read).
	current := func(p string) (blob string, listed bool) {
		if blob, read := b.blobs[p]; read {
			return blob, true
		}
		blob, listed = l.files[p]
		return blob, listed
	}
	// The base's blobs are kept: they tell committed documents from
	// changed ones.
	b.baseBlobs = make(map[string]string)
	dirty := false
	for f, err := range b.opts.Base.Files() {
		if err != nil {
			return false, fmt.Errorf("read base for comparison: %w", err)
		}
		if _, ok := knowledge.Classify(f.Path, b.opts.ContextFiles); !ok {
			continue
		}
		b.baseBlobs[f.Path] = f.Blob
		if blob, listed := current(f.Path); !listed || blob == "" || blob != f.Blob {
			dirty = true
		}
	}
	return dirty || len(b.baseBlobs) != len(l.files), nil
}
