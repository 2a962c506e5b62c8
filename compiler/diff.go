package compiler

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/kbqdev/kbq/artifact"
	"github.com/kbqdev/kbq/compiler/checks"
	"github.com/kbqdev/kbq/gitsource"
	"github.com/kbqdev/kbq/knowledge"
)

// DiffEntry is a document added, changed or removed between two revisions.
type DiffEntry struct {
	Change      string      `json:"change"` // "added", "changed" or "removed"
	Path        string      `json:"path"`
	Kind        string      `json:"kind"`
	Topic       string      `json:"topic"`
	Scope       string      `json:"scope"`
	Title       string      `json:"title"`
	Errors      int         `json:"errors"`
	Warnings    int         `json:"warnings"`
	Diagnostics Diagnostics `json:"diagnostics"`
}

// DiffResult lists the knowledge changes between two revisions.
type DiffResult struct {
	Base    string      `json:"base"`
	Head    string      `json:"head"`
	Entries []DiffEntry `json:"changes"`
	// Stale is the knowledge the change leaves untouched that names
	// repository paths it modifies, renames or deletes.
	Stale []StaleEntry `json:"may_need_update"`
}

// StaleEntry is an untouched document naming paths a change touches.
type StaleEntry struct {
	Path       string     `json:"path"`
	Kind       string     `json:"kind"`
	Topic      string     `json:"topic"`
	Title      string     `json:"title"`
	References []StaleRef `json:"references"`
}

// StaleRef is one such path, where the document names it.
type StaleRef struct {
	Name   string `json:"name"`   // as the document writes it
	Line   int    `json:"line"`   // 1-based
	Col    int    `json:"col"`    // 1-based, in characters
	Change string `json:"change"` // "modified", "renamed" or "deleted"
	To     string `json:"to,omitempty"`
}

func (r StaleRef) String() string {
	if r.To != "" {
		return fmt.Sprintf("%s (%s to %s)", r.Name, r.Change, r.To)
	}
	return fmt.Sprintf("%s (%s)", r.Name, r.Change)
}

// Diff compares the knowledge documents of base and head, and validates
// the added and changed ones as head holds them.
func Diff(ctx context.Context, base, head Source, opts Options) (*DiffResult, error) {
	before, err := diffFiles(base, opts)
	if err != nil {
		return nil, err
	}
	after, err := diffFiles(head, opts)
	if err != nil {
		return nil, err
	}
	var touched, removed []string
	for p, f := range after {
		if old, ok := before[p]; !ok || old.Blob != f.Blob {
			touched = append(touched, p)
		}
	}
	for p := range before {
		if _, ok := after[p]; !ok {
			removed = append(removed, p)
		}
	}
	res := &DiffResult{Entries: []DiffEntry{}}
	if len(touched) > 0 {
		checked, err := Check(ctx, head, CheckOptions{Options: opts, Paths: touched})
		if err != nil {
			return nil, err
		}
		for _, d := range checked.Documents {
			_, existed := before[d.Path]
			res.Entries = append(res.Entries, changedEntry(d, existed, checked.Diagnostics))
		}
	}
	if len(removed) > 0 {
		checked, err := Check(ctx, base, CheckOptions{Options: opts, Paths: removed})
		if err != nil {
			return nil, err
		}
		for _, d := range checked.Documents {
			res.Entries = append(res.Entries, DiffEntry{Change: "removed", Path: d.Path, Kind: d.Kind, Topic: d.Topic, Scope: d.Scope, Title: d.Title, Diagnostics: Diagnostics{}})
		}
	}
	order := map[string]int{"added": 0, "changed": 1, "removed": 2}
	slices.SortFunc(res.Entries, func(a, b DiffEntry) int {
		return cmp.Or(cmp.Compare(order[a.Change], order[b.Change]), cmp.Compare(a.Path, b.Path))
	})
	if res.Stale, err = staleKnowledge(ctx, base, head, before, after, opts); err != nil {
		return nil, err
	}
	return res, nil
}

// diffFiles lists the knowledge files of one side of a diff, read with
// that side's own configuration; attachments are left out.
func diffFiles(src Source, opts Options) (map[string]gitsource.File, error) {
	if err := opts.Resolve(src); err != nil {
		return nil, err
	}
	list, err := KnowledgeFiles(src, opts)
	if err != nil {
		return nil, err
	}
	out := make(map[string]gitsource.File, len(list))
	for _, f := range list {
		if loc, _ := knowledge.Classify(f.Path, opts.ContextFiles); loc.Kind != knowledge.KindAttachment {
			out[f.Path] = f
		}
	}
	return out, nil
}

// changedEntry is the entry of a document the change adds or changes,
// with what the check of head says of it.
func changedEntry(d artifact.Document, existed bool, diags Diagnostics) DiffEntry {
	e := DiffEntry{Change: "changed", Path: d.Path, Kind: d.Kind, Topic: d.Topic, Scope: d.Scope, Title: d.Title, Diagnostics: Diagnostics{}}
	if !existed {
		e.Change = "added"
	}
	for _, diag := range diags {
		if diag.Path != d.Path {
			continue
		}
		e.Diagnostics = append(e.Diagnostics, diag)
		if diag.Severity == Error {
			e.Errors++
		} else {
			e.Warnings++
		}
	}
	return e
}

// pathChange is what a change did to a repository path.
type pathChange struct {
	change string // "modified", "renamed" or "deleted"
	to     string // the new path of a renamed file
}

// staleKnowledge finds the knowledge head holds unchanged from base that
// names a path the change modifies, renames or deletes: a link to the file,
// or a code span naming it or a directory the change empties. Modified knowledge
// files are left out (the change lists them), renamed or deleted ones are
// not (links to them break).
func staleKnowledge(ctx context.Context, base, head Source, before, after map[string]gitsource.File, opts Options) ([]StaleEntry, error) {
	changes, err := pathChanges(base, head, before)
	if err != nil {
		return nil, err
	}
	if len(changes) == 0 {
		return []StaleEntry{}, nil
	}
	var stale []StaleEntry
	var paths []string
	for _, p := range slices.Sorted(maps.Keys(after)) {
		f := after[p]
		if prev, ok := before[p]; !ok || prev.Blob != f.Blob || strings.HasPrefix(p, knowledge.GlobalPathPrefix) {
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		data, err := head.Read(f, cmp.Or(opts.MaxFileSize, DefaultMaxFileSize))
		if err != nil {
			continue // too large to be knowledge; the check of head says so
		}
		if refs := changedReferences(data, p, changes); len(refs) > 0 {
			stale = append(stale, StaleEntry{Path: p, References: refs})
			paths = append(paths, p)
		}
	}
	if len(stale) == 0 {
		return []StaleEntry{}, nil
	}
	// Titles and topics as the check of head derives them.
	checked, err := Check(ctx, head, CheckOptions{Options: opts, Paths: paths})
	if err != nil {
		return nil, err
	}
	for _, d := range checked.Documents {
		if i := slices.IndexFunc(stale, func(e StaleEntry) bool { return e.Path == d.Path }); i >= 0 {
			stale[i].Kind, stale[i].Topic, stale[i].Title = d.Kind, d.Topic, d.Title
		}
	}
	return stale, nil
}

// pathChanges lists, by lowercased path (a directory's with a trailing
// slash), what the change from base to head does to the repository's
// files: modified (knowledge files aside), renamed or deleted.
func pathChanges(base, head Source, before map[string]gitsource.File) (map[string]pathChange, error) {
	blobs := func(src Source) (map[string]string, error) {
		out := make(map[string]string)
		for f, err := range src.Files() {
			if err != nil {
				return nil, err
			}
			out[f.Path] = f.Blob
		}
		return out, nil
	}
	old, err := blobs(base)
	if err != nil {
		return nil, err
	}
	cur, err := blobs(head)
	if err != nil {
		return nil, err
	}
	added := make(map[string]string) // blob to the path that newly holds it
	for p, b := range cur {
		if _, ok := old[p]; !ok && b != "" {
			added[b] = p
		}
	}
	changes := make(map[string]pathChange)
	for p, b := range old {
		var c pathChange
		switch nb, ok := cur[p]; {
		case !ok && added[b] != "":
			c = pathChange{change: "renamed", to: added[b]}
		case !ok:
			c = pathChange{change: "deleted"}
		case nb != b && before[p].Path == "":
			c = pathChange{change: "modified"}
		default:
			continue
		}
		changes[strings.ToLower(p)] = c
	}
	goneDirectories(changes, old, cur)
	return changes, nil
}

// goneDirectories adds to changes the directories of old that cur no
// longer has. A directory counts when it is gone: one whose files merely
// changed still is what the knowledge says it is. Its files moving
// together to one new directory is a rename.
func goneDirectories(changes map[string]pathChange, old, cur map[string]string) {
	have := checks.NewRepoPaths()
	for p := range cur {
		have.Add(p)
	}
	for p := range old {
		c := changes[strings.ToLower(p)]
		for d := path.Dir(p); d != "." && !have.Exists(d); d = path.Dir(d) {
			key := strings.ToLower(d) + "/"
			to := ""
			if rest := strings.TrimPrefix(p, d); c.change == "renamed" && strings.HasSuffix(c.to, rest) {
				to = strings.TrimSuffix(c.to, rest)
			}
			switch prev, seen := changes[key]; {
			case !seen && to != "":
				changes[key] = pathChange{change: "renamed", to: to}
			case !seen:
				changes[key] = pathChange{change: "deleted"}
			case prev.to != to:
				changes[key] = pathChange{change: "deleted"} // its files went different ways
			}
		}
	}
}

// changedReferences are the references of the knowledge file at p (data)
// to paths in changes, each once.
func changedReferences(data []byte, p string, changes map[string]pathChange) []StaleRef {
	src := newSource(data)
	body := splitFrontmatter(src, false, func(int, int, string) {}).body
	var refs []StaleRef
	seen := make(map[string]bool)
	checks.ScanReferences(src.Data, body, p, func(ref checks.PathRef) {
		if seen[ref.Name] {
			return
		}
		for _, c := range ref.Candidates {
			key := strings.ToLower(c)
			ch, ok := changes[key]
			if !ok {
				ch, ok = changes[key+"/"]
			}
			if !ok {
				continue
			}
			seen[ref.Name] = true
			line, col := src.Position(ref.Off)
			refs = append(refs, StaleRef{Name: ref.Name, Line: line, Col: col, Change: ch.change, To: ch.to})
			return
		}
	})
	return refs
}
