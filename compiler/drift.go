package compiler

import (
	"cmp"
	"context"
	"iter"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/kbqdev/kbq/gitsource"
	"github.com/kbqdev/kbq/knowledge"
)

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

// driftDoc is a document being followed back through history.
type driftDoc struct {
	entry    DriftEntry
	refs     []pathRef
	keys     [][]string // lowercased candidates of each reference
	reviewed time.Time
	done     bool
}

// Drift lists the knowledge of head (a commit's tree) that names
// repository paths changed by commits after the document's own last change
// (or its reviewed: date, when later), oldest knowledge first. history is
// head's first-parent history, newest first. A path counts as changed when
// a commit adds, modifies or deletes it, and a directory when a commit
// deletes or moves away a file in it: edits and additions inside a
// directory leave what the knowledge says of it true.
func Drift(ctx context.Context, head Source, history iter.Seq2[gitsource.Commit, error], opts Options) ([]DriftEntry, error) {
	if err := opts.Resolve(head); err != nil {
		return nil, err
	}
	l, err := collect(head, &opts)
	if err != nil {
		return nil, err
	}
	docs, err := readDriftDocs(ctx, l, &opts)
	if err != nil {
		return nil, err
	}
	w := newDriftWalk(docs)
	for commit, err := range history {
		if err != nil {
			return nil, err
		}
		if w.pending == 0 {
			break
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		w.commit(commit)
	}
	return driftEntries(docs), nil
}

// readDriftDocs reads the repository's documents and the paths each names.
func readDriftDocs(ctx context.Context, l *listing, opts *Options) ([]*driftDoc, error) {
	var docs []*driftDoc
	for _, c := range l.docs {
		if strings.HasPrefix(c.path, knowledge.GlobalPathPrefix) {
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		d, err := readAndParse(c, opts)
		if err != nil {
			return nil, err
		}
		if d.src == nil {
			continue
		}
		dd := &driftDoc{entry: DriftEntry{Path: d.Path, Kind: d.Kind, Topic: d.Topic, Title: d.Title, References: []DriftRef{}}, reviewed: d.meta.reviewed}
		seen := make(map[string]bool)
		scanReferences(d.src.text, d.body, d.Path, func(ref pathRef) {
			if seen[ref.Name] {
				return
			}
			seen[ref.Name] = true
			keys := make([]string, len(ref.Candidates))
			for i, c := range ref.Candidates {
				keys[i] = strings.ToLower(c)
			}
			line, col := d.src.position(ref.Off)
			dd.refs = append(dd.refs, ref)
			dd.keys = append(dd.keys, keys)
			dd.entry.References = append(dd.entry.References, DriftRef{Name: ref.Name, Line: line, Col: col})
		})
		if !d.meta.reviewed.IsZero() {
			r := d.meta.reviewed
			dd.entry.Reviewed = &r
		}
		docs = append(docs, dd)
	}
	return docs, nil
}

// driftWalk follows the history newest first, for each document until
// its own last change.
type driftWalk struct {
	byPath  map[string]*driftDoc
	named   map[string][]driftRefAt // each lowercased path a reference may mean
	pending int                     // documents whose last change is not found yet
}

type driftRefAt struct {
	doc *driftDoc
	ref int
}

func newDriftWalk(docs []*driftDoc) *driftWalk {
	w := &driftWalk{byPath: make(map[string]*driftDoc), named: make(map[string][]driftRefAt), pending: len(docs)}
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

// commit records what commit changed: the last change of the documents
// it touches, and drift for the references to the paths it changes, or
// to the directories it deletes or moves files out of.
func (w *driftWalk) commit(commit gitsource.Commit) {
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
func (w *driftWalk) hit(commit gitsource.Commit, key string, deleted bool) {
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

// driftEntries are the documents with drift, oldest knowledge first.
func driftEntries(docs []*driftDoc) []DriftEntry {
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
