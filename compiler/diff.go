package compiler

import (
	"cmp"
	"context"
	"slices"

	"github.com/kbqdev/kbq/artifact"
	"github.com/kbqdev/kbq/gitsource"
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
}

// Diff compares the knowledge documents of base and head, and validates
// the added and changed ones as head holds them.
func Diff(ctx context.Context, base, head Source, opts Options) (*DiffResult, error) {
	// Each side is read with its own configuration.
	files := func(src Source) (map[string]gitsource.File, error) {
		opts := opts
		if err := opts.Resolve(src); err != nil {
			return nil, err
		}
		list, err := KnowledgeFiles(src, opts)
		if err != nil {
			return nil, err
		}
		out := make(map[string]gitsource.File, len(list))
		for _, f := range list {
			if loc, _ := classify(f.Path, opts.ContextFiles); loc.kind != artifact.KindAttachment {
				out[f.Path] = f
			}
		}
		return out, nil
	}
	before, err := files(base)
	if err != nil {
		return nil, err
	}
	after, err := files(head)
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
	res := &DiffResult{}
	if len(touched) > 0 {
		checked, err := Check(ctx, head, CheckOptions{Options: opts, Paths: touched})
		if err != nil {
			return nil, err
		}
		for _, d := range checked.Documents {
			e := DiffEntry{Change: "changed", Path: d.Path, Kind: d.Kind, Topic: d.Topic, Scope: d.Scope, Title: d.Title, Diagnostics: Diagnostics{}}
			if _, ok := before[d.Path]; !ok {
				e.Change = "added"
			}
			for _, diag := range checked.Diagnostics {
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
			res.Entries = append(res.Entries, e)
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
	if res.Entries == nil {
		res.Entries = []DiffEntry{}
	}
	return res, nil
}
