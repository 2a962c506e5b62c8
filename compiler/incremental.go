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

// rebuild reports whether an index of segs segments, holding live chunks
// and deleted ones, should be built from scratch rather than updated.
func rebuild(segs int, live, deleted uint64) bool {
	full := int((live + batchChunks - 1) / batchChunks) // segments of a full build
	return float64(deleted) > maxDeletedFraction*float64(live+deleted) || segs >= full+maxAddedSegments
}

// previous is the artifact a build may update.
type previous struct {
	m     *artifact.Manifest
	dir   string // its index directory
	docs  map[string]*artifact.Document
	segs  []snapshotSegment
	epoch uint64
	stale map[string]bool // documents this build recompiles
}

// loadPrevious reads the artifact in out, or returns nil when there is none
// or it cannot be updated.
func loadPrevious(out string) *previous {
	m, err := artifact.Read(out)
	if err != nil {
		return nil
	}
	dir, err := m.IndexDir(out)
	if err != nil {
		return nil
	}
	epoch, segs, err := readSnapshot(dir)
	if err != nil {
		return nil
	}
	p := &previous{m: m, dir: dir, segs: segs, epoch: epoch, docs: make(map[string]*artifact.Document, len(m.Documents)), stale: make(map[string]bool)}
	for i := range m.Documents {
		p.docs[m.Documents[i].Path] = &m.Documents[i]
	}
	return p
}

// plan decides what this build reads: documents that are new, changed or
// differently shadowed are recompiled (reindex); unchanged memories,
// articles and context in scopes where something changed are read for the
// checks between documents only. It reports false when a full build is
// the better choice.
func (p *previous) plan(l *listing, shadow map[string][]string) (todo []candidate, reindex map[string]bool, ok bool) {
	reindex = make(map[string]bool)
	changedScopes := make(map[string]bool)
	present := make(map[string]bool, len(l.docs))
	for _, c := range l.docs {
		present[c.path] = true
		old := p.docs[c.path]
		if old != nil && c.blob != "" && c.blob == old.Blob && slices.Equal(shadow[c.path], old.ShadowedBy) {
			continue
		}
		reindex[c.path] = true
		p.stale[c.path] = true
		changedScopes[c.loc.scope] = true
	}
	var deletedChunks uint64
	for _, s := range p.segs {
		if s.deleted != nil {
			deletedChunks += s.deleted.GetCardinality()
		}
	}
	for path, d := range p.docs {
		if !present[path] || reindex[path] {
			changedScopes[d.Scope] = true
			deletedChunks += uint64(d.Chunks)
		}
	}
	for _, a := range attachmentChanges(p.m.Attachments, l.attachmentPaths()) {
		loc, ok := classify(a, nil)
		if inner, global := strings.CutPrefix(a, artifact.GlobalPathPrefix); global {
			loc, ok = classifyGlobal(inner)
		}
		if ok {
			changedScopes[loc.scope] = true
		}
	}
	if rebuild(len(p.segs), uint64(p.m.Counts.Chunks), deletedChunks) {
		return nil, nil, false
	}
	for _, c := range l.docs {
		crossChecked := c.loc.kind == artifact.KindMemory || c.loc.kind == artifact.KindArticle || c.loc.kind == artifact.KindContext
		if reindex[c.path] || (crossChecked && changedScopes[c.loc.scope]) {
			todo = append(todo, c)
		}
	}
	return todo, reindex, true
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
		next = max(next, s.id+1)
	}
	return next
}

// link hard-links the previous segments that keep live chunks into dir and
// returns them with their deletions, this build's included.
func (p *previous) link(dir string, deleted map[uint64]*roaring.Bitmap) ([]snapshotSegment, error) {
	var out []snapshotSegment
	for _, s := range p.segs {
		del := s.deleted
		if extra := deleted[s.id]; extra != nil {
			if del == nil {
				del = extra.Clone()
			} else {
				del = roaring.Or(del, extra)
			}
		}
		if p.allDeleted(s.id, del) {
			continue
		}
		name := segmentName(s.id)
		if err := linkOrCopy(filepath.Join(p.dir, name), filepath.Join(dir, name)); err != nil {
			return nil, fmt.Errorf("reuse segment %s: %w", name, err)
		}
		out = append(out, snapshotSegment{id: s.id, deleted: del})
	}
	return out, nil
}

// allDeleted reports whether no live chunk is left in segment seg.
func (p *previous) allDeleted(seg uint64, del *roaring.Bitmap) bool {
	if del == nil {
		return false
	}
	var live uint64
	for _, d := range p.m.Documents {
		if d.Seg == seg {
			live += uint64(d.Chunks)
		}
	}
	// Chunks of documents no longer in the manifest (earlier deletions) are
	// already in del; the segment is empty when del covers the rest.
	var dead uint64
	for _, d := range p.m.Documents {
		if d.Seg == seg && del.ContainsInt(int(d.Doc)) {
			dead += uint64(d.Chunks)
		}
	}
	return dead == live
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
