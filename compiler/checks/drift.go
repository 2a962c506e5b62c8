package checks

import (
	"cmp"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/kbqdev/kbq/gitsource"
)

// Drift: knowledge that names repository paths which commits changed
// after the knowledge last did. compiler.Drift reads the documents and the
// history; this follows one through the other.

// DriftEntry is a document whose named paths changed after it last did.
type DriftEntry struct {
	Path   string `json:"path"`
	Kind   string `json:"kind"`
	Topic  string `json:"topic"`
	Title  string `json:"title"`
	Commit string `json:"commit"` // its own last change; "" when older than the history read
	// Updated is when it last changed, or was reviewed when that is later.
	Updated    time.Time  `json:"updated"`
	Reviewed   *time.Time `json:"reviewed,omitempty"`
	References []DriftRef `json:"references"`
}

// DriftRef is a path a document names and the later commits that changed it.
type DriftRef struct {
	Name    string        `json:"name"` // as the document writes it
	Line    int           `json:"line"`
	Col     int           `json:"col"`
	Commits []DriftCommit `json:"commits"` // newest first
}

// DriftCommit is a commit that changed a named path.
type DriftCommit struct {
	Hash    string    `json:"commit"`
	Time    time.Time `json:"time"`
	Author  string    `json:"author"`
	Subject string    `json:"subject"`
	Deleted bool      `json:"deleted,omitempty"` // it removed the path
}

// A DriftDoc is a document being followed back through history.
type DriftDoc struct {
	entry    DriftEntry
	keys     [][]string // lowercased candidates of each reference
	reviewed time.Time
	done     bool
}

// NewDriftDoc follows the document entry describes (its references aside),
// reviewed on that day (zero when never).
func NewDriftDoc(entry DriftEntry, reviewed time.Time) *DriftDoc {
	entry.References = []DriftRef{}
	if !reviewed.IsZero() {
		entry.Reviewed = &reviewed
	}
	return &DriftDoc{entry: entry, reviewed: reviewed}
}

// AddRef follows a path the document names, written at line and col.
func (dd *DriftDoc) AddRef(ref PathRef, line, col int) {
	keys := make([]string, len(ref.Candidates))
	for i, c := range ref.Candidates {
		keys[i] = strings.ToLower(c)
	}
	dd.keys = append(dd.keys, keys)
	dd.entry.References = append(dd.entry.References, DriftRef{Name: ref.Name, Line: line, Col: col})
}

// A DriftWalk follows the history newest first, for each document until
// its own last change.
type DriftWalk struct {
	byPath  map[string]*DriftDoc
	named   map[string][]driftRefAt // each lowercased path a reference may mean
	pending int                     // documents whose last change is not found yet
}

// Done reports whether every document's own last change was found: older
// commits change nothing.
func (w *DriftWalk) Done() bool { return w.pending == 0 }

type driftRefAt struct {
	doc *DriftDoc
	ref int
}

// NewDriftWalk follows docs.
func NewDriftWalk(docs []*DriftDoc) *DriftWalk {
	w := &DriftWalk{byPath: make(map[string]*DriftDoc), named: make(map[string][]driftRefAt), pending: len(docs)}
	for _, dd := range docs {
		w.byPath[dd.entry.Path] = dd
		for i, keys := range dd.keys {
			for _, k := range keys {
				w.named[k] = append(w.named[k], driftRefAt{dd, i})
			}
		}
	}
	return w
}

// Commit records what commit changed: the last change of the documents
// it touches, and drift for the references to the paths it changes, or
// to the directories it deletes or moves files out of.
func (w *DriftWalk) Commit(commit gitsource.Commit) {
	for _, p := range commit.Changed {
		if dd := w.byPath[p]; dd != nil && !dd.done {
			dd.done = true
			w.pending--
			dd.entry.Commit, dd.entry.Updated = commit.Hash, commit.Time
		}
	}
	dirs := make(map[string]bool)
	for _, p := range commit.Changed {
		key := strings.ToLower(p)
		w.hit(commit, key, commit.Deleted[p])
		if !commit.Deleted[p] {
			continue
		}
		for d := path.Dir(key); d != "." && !dirs[d]; d = path.Dir(d) {
			dirs[d] = true
			w.hit(commit, d, false)
		}
	}
}

// hit records commit against the references that may mean key.
func (w *DriftWalk) hit(commit gitsource.Commit, key string, deleted bool) {
	for _, at := range w.named[key] {
		dd := at.doc
		if dd.done || commit.Time.Before(dd.reviewed) {
			continue
		}
		ref := &dd.entry.References[at.ref]
		if n := len(ref.Commits); n > 0 && ref.Commits[n-1].Hash == commit.Hash {
			continue // named twice: as written and from the document's directory
		}
		ref.Commits = append(ref.Commits, DriftCommit{Hash: commit.Hash, Time: commit.Time, Author: commit.Author, Subject: commit.Subject, Deleted: deleted})
	}
}

// DriftEntries are the documents with drift, oldest knowledge first.
func DriftEntries(docs []*DriftDoc) []DriftEntry {
	out := []DriftEntry{}
	for _, dd := range docs {
		refs := dd.entry.References[:0]
		for _, r := range dd.entry.References {
			if len(r.Commits) > 0 {
				refs = append(refs, r)
			}
		}
		if len(refs) == 0 {
			continue
		}
		dd.entry.References = refs
		if dd.reviewed.After(dd.entry.Updated) {
			dd.entry.Updated = dd.reviewed
		}
		out = append(out, dd.entry)
	}
	slices.SortFunc(out, func(a, b DriftEntry) int {
		return cmp.Or(a.Updated.Compare(b.Updated), cmp.Compare(a.Path, b.Path))
	})
	return out
}
