package query

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/kbqdev/kbq/artifact"
	"github.com/kbqdev/kbq/internal/gitdir"
)

var (
	// ErrNoResults means a search or listing found nothing.
	ErrNoResults = errors.New("no results")
	// ErrUnknownScope means a request names a scope the artifact lacks.
	ErrUnknownScope = errors.New("unknown scope")
	// ErrReplaced means a build replaced the artifact while it was read,
	// and removed what was read: the command can run again.
	ErrReplaced = errors.New("artifact replaced")
	// ErrNothingToFind means a query only excludes: it names nothing to
	// search for.
	ErrNothingToFind = errors.New("the query only excludes")
	// ErrBadFilter means a filter's value cannot be read.
	ErrBadFilter = errors.New("bad filter")
)

// Ranking parameters. Chosen by measurement; docs/benchmarks.md has the
// table.
var (
	DefaultK1     = 1.2
	DefaultB      = 0.75
	DefaultBoosts = map[string]float64{
		artifact.FieldTitle:   1.5,
		artifact.FieldHeading: 1.2,
		artifact.FieldTags:    1.5,
		artifact.FieldBody:    1.0,
	}
)

// Ranking holds the BM25 parameters and field boosts of searches.
type Ranking struct {
	K1, B  float64
	Boosts map[string]float64
	// SemanticWeight, from 0 to 1, is the semantic channel's share of a
	// hybrid score; 0 means DefaultSemanticWeight.
	SemanticWeight float64
	// Fusion is FusionRRF or FusionConvex; "" means DefaultFusion.
	Fusion string
	// Diversity, from 0 to 1, is how much a result's likeness to those
	// ranked above it counts against its relevance in the rankings by
	// meaning (maximal marginal relevance, diversify.go); 0, the default,
	// ranks by relevance, near-copies still last.
	Diversity float64
	// RecencyWeight, from 0 to 1, is the share of a score a search's
	// recency prior moves (Request.Recency); 0 means DefaultRecencyWeight.
	RecencyWeight float64
}

// DefaultRanking returns the default ranking parameters.
func DefaultRanking() Ranking {
	return Ranking{K1: DefaultK1, B: DefaultB, Boosts: DefaultBoosts}
}

// Index is an open artifact. It is safe for concurrent use.
type Index struct {
	// Dir is the artifact directory.
	Dir string
	// broken, once a read met a damaged file, is the error every read
	// returns (guard.go).
	broken atomic.Pointer[error]
	// Manifest is the manifest without its document list; Documents loads it.
	Manifest *artifact.Manifest

	engine  *engine
	ranking Ranking
	// exhaustive scores every match term at a time and places hits by
	// their stored fields: the reference top-k evaluation and
	// engine.firstRanked are tested against.
	exhaustive bool

	docsOnce sync.Once
	docs     []artifact.Document
	docsErr  error

	agesOnce  sync.Once
	agesTable *artifact.Ages // nil without one
	agesUnmap func() error

	vecOnce  sync.Once
	vecs     *artifact.Vectors
	vecUnmap func() error
	distPool sync.Pool // of *[]uint16, for semanticTop

	rowsOnce sync.Once
	rows     *rowMap
	rowsErr  error
	// firstRow maps a document's path to its first chunk's vector row.
	firstRowOnce sync.Once
	firstRow     map[string]int
	firstRowErr  error
	vecErr       error
	warmOnce     sync.Once
}

// Open opens the artifact in dir.
func Open(dir string) (*Index, error) {
	return OpenWith(dir, DefaultRanking())
}

// OpenWith opens the artifact in dir with the given ranking parameters.
func OpenWith(dir string, r Ranking) (*Index, error) {
	// A build may replace the index between reading the manifest and
	// opening the index it names (kbc keeps a replaced index for a while,
	// but a reader can be slower still): when opening fails, and the
	// manifest names another index by then, open that one. An index that
	// fails while its manifest still names it is damaged.
	var lastErr error
	for range 8 {
		m, err := artifact.ReadHeader(dir)
		if err != nil {
			return nil, err
		}
		if lastErr != nil && m.Index == lastIndex(lastErr) {
			return nil, lastErr
		}
		indexDir, err := m.IndexDir(dir)
		if err != nil {
			return nil, err
		}
		ix, err := openNamed(dir, indexDir, m, r)
		if err == nil {
			return ix, nil
		}
		lastErr = &openError{index: m.Index, err: err}
	}
	return nil, lastErr
}

// openNamed opens the index directory indexDir that manifest m names.
func openNamed(dir, indexDir string, m *artifact.Manifest, r Ranking) (*Index, error) {
	if _, err := os.Stat(indexDir); errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s names index %s, which is missing", artifact.ErrCorrupt, filepath.Join(dir, artifact.ManifestFile), m.Index)
	}
	return openIndex(dir, indexDir, m, r)
}

// openError is a failure to open the index a manifest named.
type openError struct {
	index string
	err   error
}

func (e *openError) Error() string { return e.err.Error() }
func (e *openError) Unwrap() error { return e.err }

func lastIndex(err error) string {
	var oe *openError
	if errors.As(err, &oe) {
		return oe.index
	}
	return ""
}

// openIndex opens the index directory of manifest m and checks that it
// holds as many live chunks as the manifest counts. iceread checks each
// segment's footer as it loads it; when that fails, or panics on a damaged
// segment, artifact.CheckIndex names what is wrong. Checking before
// opening cost 0.8 ms of a 5 ms open at 45 segments.
func openIndex(dir, indexDir string, m *artifact.Manifest, r Ranking) (_ *Index, err error) {
	var eng *engine
	defer func() {
		if p := recover(); p != nil {
			err = explainIndex(m, indexDir, fmt.Errorf("%v", p))
			if eng != nil {
				eng.close()
			}
		}
	}()
	eng, err = newEngine(indexDir)
	if err != nil {
		return nil, explainIndex(m, indexDir, err)
	}
	if live := eng.live.Count(); live != uint(m.Counts.Chunks) {
		eng.close()
		return nil, fmt.Errorf("%w: the manifest counts %d chunks, its index %s holds %d", artifact.ErrCorrupt, m.Counts.Chunks, m.Index, live)
	}
	return &Index{Dir: dir, Manifest: m, engine: eng, ranking: r}, nil
}

// explainIndex turns a failure to open an index into a corrupt-artifact
// error that names the missing or damaged file, when the checks find it.
func explainIndex(m *artifact.Manifest, indexDir string, err error) error {
	if _, cerr := m.CheckIndex(indexDir); cerr != nil {
		return cerr
	}
	return fmt.Errorf("%w: open index %s: %w", artifact.ErrCorrupt, indexDir, err)
}

// Close releases the index.
func (ix *Index) Close() error {
	ix.engine.close()
	if ix.agesUnmap != nil {
		ix.agesUnmap()
	}
	if ix.vecUnmap != nil {
		ix.vecUnmap()
	}
	return nil
}

// Documents returns every document of the index: its document table,
// which stays in the index directory for as long as a build keeps that
// index, so a reader racing a build reads the documents of the index it
// opened.
func (ix *Index) Documents() ([]artifact.Document, error) {
	ix.docsOnce.Do(func() {
		ix.docs, ix.docsErr = guarded(ix, ix.readDocuments)
	})
	return ix.docs, ix.docsErr
}

func (ix *Index) readDocuments() ([]artifact.Document, error) {
	m := ix.Manifest
	indexDir, err := m.IndexDir(ix.Dir)
	if err != nil {
		return nil, err
	}
	// A document table kbq --db left in the database is fetched now.
	table := filepath.Join(indexDir, artifact.DocumentsFile)
	if p := partialOf(table); p != nil {
		fi, err := os.Stat(table)
		if err != nil {
			return nil, err
		}
		if err := p.Need(0, fi.Size()); err != nil {
			return nil, err
		}
	}
	docs, _, err := artifact.ReadDocuments(ix.Dir, m)
	if err != nil {
		if _, serr := os.Stat(indexDir); errors.Is(serr, os.ErrNotExist) {
			return nil, fmt.Errorf("%w: the artifact in %s was replaced while it was read, and the index read is gone: run the command again", ErrReplaced, ix.Dir)
		}
		if errors.Is(err, artifact.ErrCorrupt) {
			return nil, fmt.Errorf("%w: rebuild it with `kbc build`", err)
		}
		return nil, err
	}
	snapshot, err := artifact.ReadSnapshot(indexDir)
	if err != nil {
		return nil, err
	}
	if len(snapshot.Segments) != len(ix.engine.segs) {
		return nil, fmt.Errorf("%w: index %s changed while it was read: run the command again", artifact.ErrCorrupt, indexDir)
	}
	counts := make(map[uint64]uint64, len(ix.engine.segs))
	for i, s := range snapshot.Segments {
		counts[s.ID] = ix.engine.segs[i].Count()
	}
	check := *m
	check.Documents = docs
	if err := check.CheckPlacement(snapshot, counts); err != nil {
		return nil, fmt.Errorf("%w: run kbc build to rebuild it", err)
	}
	return docs, nil
}

// Locate finds the artifact directory: dir when set, else env (the value of
// $KBQ_INDEX) when set, else .kbq/ at the root of the repository holding
// cwd. It also returns that repository's root, or "" outside one.
func Locate(dir, env, cwd string) (artifactDir, repoRoot string, err error) {
	if d, err := gitdir.Find(cwd); err == nil {
		repoRoot = d.Worktree // "" for a bare repository: no .kbq/ there
	}
	switch {
	case dir != "":
		return dir, repoRoot, nil
	case env != "":
		return env, repoRoot, nil
	case repoRoot == "":
		return "", "", fmt.Errorf("%w: %s is not inside a git repository (give --index DIR or set KBQ_INDEX)", artifact.ErrNoArtifact, cwd)
	}
	return filepath.Join(repoRoot, artifact.DefaultDir), repoRoot, nil
}

// Freshness says whether an artifact is behind what it was built from.
type Freshness struct {
	// Notice explains in one line what is behind and what to run; "" when
	// the artifact is current, or when nothing can be told.
	Notice string
	// Changed lists the knowledge files that changed in the working tree
	// since a build from it, at most maxChanged; More says there were others.
	Changed []string
	More    bool
}

const maxChanged = 10

// A FreshnessCheck compares an artifact with the repository it was built
// from: a build from the working tree with the files on disk now (a stat
// call per knowledge file, or per knowledge directory in a large knowledge
// base, and a hash of the files whose stat data changed), any other build
// with the commit HEAD names now.
//
// The comparison needs nothing of the artifact but its worktree record,
// so it starts before the artifact is opened and runs beside the opening
// and the search: it takes about as long as either.
type FreshnessCheck struct {
	root string
	done chan struct{}

	recorded bool   // the artifact has a worktree record
	index    string // the index the record names
	changed  []string
	more     bool
	head     string // HEAD's commit, read when there is no record
}

// CheckFreshness starts comparing the artifact in dir with the repository
// at repoRoot; Result waits for the outcome.
func CheckFreshness(dir, repoRoot string) *FreshnessCheck {
	c := &FreshnessCheck{root: repoRoot, done: make(chan struct{})}
	go func() {
		defer close(c.done)
		index, changed, more, err := artifact.CheckWorktree(dir, repoRoot, artifact.MaxCheckedFiles, maxChanged)
		if err != nil {
			c.head = headCommit(repoRoot)
			return
		}
		c.recorded, c.index, c.changed, c.more = true, index, changed, more
	}()
	return c
}

// Result says whether the artifact ix, opened from the directory the check
// was started on, is behind the repository.
func (c *FreshnessCheck) Result(ix *Index) Freshness {
	<-c.done
	src := ix.Manifest.Source
	if src.Mode == "worktree" {
		// A record naming another index is left from another build.
		if !c.recorded || c.index != ix.Manifest.Index || len(c.changed) == 0 {
			return Freshness{}
		}
		list := strings.Join(c.changed, ", ")
		if c.more {
			list += ", …"
		}
		return Freshness{Changed: c.changed, More: c.more,
			Notice: fmt.Sprintf("knowledge changed since the artifact was built from the working tree (%s): run kbc build, or keep kbc watch running", list)}
	}
	if src.Commit == "" {
		return Freshness{}
	}
	head := c.head
	if c.recorded { // a record left beside a build from a commit
		head = headCommit(c.root)
	}
	if head == "" || head == src.Commit {
		return Freshness{}
	}
	return Freshness{Notice: fmt.Sprintf("the artifact was built from commit %s but HEAD is %s: run kbc build to refresh it", short(src.Commit), short(head))}
}

// headCommit is the commit HEAD names in the repository at root; "" when
// it cannot be read.
func headCommit(root string) string {
	if d, err := gitdir.Find(root); err == nil {
		return d.HeadCommit()
	}
	return ""
}

func short(hash string) string {
	if len(hash) > 12 {
		return hash[:12]
	}
	return hash
}
