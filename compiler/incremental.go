package compiler

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/RoaringBitmap/roaring"

	"github.com/kbqdev/kbq/artifact"
	"github.com/kbqdev/kbq/artifact/postings"
	"github.com/kbqdev/kbq/knowledge"
)

// An incremental build keeps the previous index's segments (hard-linked
// into the new index directory: segment files are never modified), adds a
// segment for the documents whose blob or shadowing changed, and marks the
// chunks of changed and removed documents deleted in the new snapshot. It
// never runs Bluge's online writer. When deletions would pass a quarter of
// the chunks, or incremental builds have added 64 segments to those a full
// build makes, it builds from scratch instead, which also compacts the
// index.
const (
	maxDeletedFraction = 0.25
	maxAddedSegments   = 64
)

// rebuild says why an index of segs segments, holding live chunks and
// deleted ones, should be built from scratch rather than updated, or "".
func rebuild(segs int, live, deleted uint64) string {
	full := int((live + tierTarget(live) - 1) / tierTarget(live)) // segments of a full build
	switch {
	case float64(deleted) > maxDeletedFraction*float64(live+deleted):
		return fmt.Sprintf("%d of %d chunks would be deleted (over %.0f%%): a full build compacts them", deleted, live+deleted, 100*maxDeletedFraction)
	case segs >= full+maxAddedSegments:
		return fmt.Sprintf("the index has %d segments, %d more than a full build makes: a full build merges them", segs, segs-full)
	}
	return ""
}

// previous is the artifact a build may update.
type previous struct {
	m     *artifact.Manifest
	dir   string // its index directory
	docs  map[string]*artifact.Document
	segs  []artifact.SnapshotSegment
	epoch uint64
	stale map[string]bool // documents this build recompiles
}

// loadPrevious reads the artifact in out and checks that its index holds
// what its manifest says. It returns nil and the reason when there is none
// or it cannot be updated; the reason is "" when there is no artifact.
func loadPrevious(out string) (*previous, string) {
	m, err := artifact.Read(out)
	switch {
	case errors.Is(err, artifact.ErrNoArtifact):
		return nil, ""
	case err != nil:
		return nil, fmt.Sprintf("the previous artifact cannot be read (%v)", err)
	}
	dir, err := m.IndexDir(out)
	if err != nil {
		return nil, fmt.Sprintf("the previous manifest names no index (%v)", err)
	}
	snap, err := m.CheckIndex(dir)
	if err != nil {
		return nil, fmt.Sprintf("the previous index does not match its manifest (%v)", err)
	}
	p := &previous{m: m, dir: dir, segs: snap.Segments, epoch: snap.Epoch, docs: make(map[string]*artifact.Document, len(m.Documents)), stale: make(map[string]bool)}
	for i := range m.Documents {
		p.docs[m.Documents[i].Path] = &m.Documents[i]
	}
	return p, ""
}

// plan decides what this build reads: documents that are new, changed or
// differently shadowed are recompiled (reindex); unchanged memories,
// articles and context in scopes where something changed are read for the
// checks between documents only. It says why when a full build is the
// better choice, and returns "" otherwise.
func (p *previous) plan(l *listing, shadow map[string][]string) (todo []candidate, reindex map[string]bool, why string) {
	reindex = make(map[string]bool)
	changedScopes := make(map[string]bool)
	for _, c := range l.docs {
		old := p.docs[c.path()]
		if old != nil && c.blob() == "" {
			// Its blob is known only once it is read (a file of the global
			// scope, or one the working tree's stat cache does not vouch
			// for): it is read, and recompiled if it changed, so the
			// checks between documents of its scope need the others too.
			changedScopes[c.loc.Scope] = true
			continue
		}
		if old != nil && c.blob() == old.Blob && slices.Equal(shadow[c.path()], old.ShadowedBy) {
			continue
		}
		reindex[c.path()] = true
		p.stale[c.path()] = true
		changedScopes[c.loc.Scope] = true
	}
	var deletedChunks uint64
	for _, s := range p.segs {
		if s.Deleted != nil {
			deletedChunks += s.Deleted.GetCardinality()
		}
	}
	present := listed(l.docs, p.m.Documents)
	for i, d := range p.m.Documents {
		if !present[i] || reindex[d.Path] {
			changedScopes[d.Scope] = true
			deletedChunks += uint64(d.Chunks)
		}
	}
	for _, a := range attachmentChanges(p.m.Attachments, l.attachmentPaths()) {
		loc, ok := knowledge.Classify(a, nil)
		if inner, global := strings.CutPrefix(a, knowledge.GlobalPathPrefix); global {
			loc, ok = knowledge.ClassifyGlobal(inner)
		}
		if ok {
			changedScopes[loc.Scope] = true
		}
	}
	if why := rebuild(len(p.segs), uint64(p.m.Counts.Chunks), deletedChunks); why != "" {
		return nil, nil, why
	}
	for _, c := range l.docs {
		crossChecked := c.loc.Kind == knowledge.KindMemory || c.loc.Kind == knowledge.KindArticle || c.loc.Kind == knowledge.KindContext
		unknown := c.blob() == "" && p.docs[c.path()] != nil
		if reindex[c.path()] || unknown || (crossChecked && changedScopes[c.loc.Scope]) {
			todo = append(todo, c)
		}
	}
	return todo, reindex, ""
}

// unchanged reports whether d, read for the checks only, is the document
// the previous artifact holds.
func (p *previous) unchanged(d *document) bool {
	old := p.docs[d.Path]
	return old != nil && old.Blob == d.Blob && slices.Equal(old.ShadowedBy, d.ShadowedBy)
}

// nextSegment is the first segment id after the previous index's.
func (p *previous) nextSegment() uint64 {
	next := p.epoch + 1
	for _, s := range p.segs {
		next = max(next, s.ID+1)
	}
	return next
}

// link hard-links the previous segments that keep live chunks (those
// holding a document of live) into dir and returns them with their
// deletions, this build's included.
func (p *previous) link(dir string, live map[uint64]bool, deleted map[uint64]*roaring.Bitmap) ([]artifact.SnapshotSegment, error) {
	var out []artifact.SnapshotSegment
	for _, s := range p.segs {
		if !live[s.ID] {
			continue
		}
		del := s.Deleted
		if extra := deleted[s.ID]; extra != nil {
			if del == nil {
				del = extra.Clone()
			} else {
				del = roaring.Or(del, extra)
			}
		}
		for _, name := range []string{artifact.SegmentName(s.ID), postings.FileName(s.ID)} {
			if err := linkOrCopy(filepath.Join(p.dir, name), filepath.Join(dir, name)); err != nil {
				return nil, fmt.Errorf("reuse segment %s: %w", name, err)
			}
		}
		out = append(out, artifact.SnapshotSegment{ID: s.ID, Deleted: del})
	}
	return out, nil
}

func linkOrCopy(from, to string) error {
	if err := os.Link(from, to); err == nil {
		return nil
	} else if errors.Is(err, os.ErrNotExist) {
		return err
	}
	src, err := os.Open(from)
	if err != nil {
		return err
	}
	defer src.Close()
	return writeFileSync(to, func(w io.Writer) error {
		_, err := io.Copy(w, src)
		return err
	})
}

// attachmentChanges lists the attachments added or removed.
func attachmentChanges(before, after []string) []string {
	was := make(map[string]bool, len(before))
	for _, a := range before {
		was[a] = true
	}
	var out []string
	for _, a := range after {
		if !was[a] {
			out = append(out, a)
		}
		delete(was, a)
	}
	for a := range was {
		out = append(out, a)
	}
	return out
}
