package compiler

import (
	"context"
	"iter"
	"strings"

	"github.com/kbqdev/kbq/compiler/checks"
	"github.com/kbqdev/kbq/gitsource"
	"github.com/kbqdev/kbq/knowledge"
)

// The entries of kbc drift are package checks' own.
type (
	DriftEntry  = checks.DriftEntry
	DriftRef    = checks.DriftRef
	DriftCommit = checks.DriftCommit
)

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
	w := checks.NewDriftWalk(docs)
	for commit, err := range history {
		if err != nil {
			return nil, err
		}
		if w.Done() {
			break
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		w.Commit(commit)
	}
	return checks.DriftEntries(docs), nil
}

// readDriftDocs reads the repository's documents and the paths each names.
func readDriftDocs(ctx context.Context, l *listing, opts *Options) ([]*checks.DriftDoc, error) {
	var docs []*checks.DriftDoc
	for _, c := range l.docs {
		if strings.HasPrefix(c.path(), knowledge.GlobalPathPrefix) {
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		d, err := l.readAndParse(c, opts)
		if err != nil {
			return nil, err
		}
		if d.src == nil {
			continue
		}
		dd := checks.NewDriftDoc(DriftEntry{Path: d.Path, Kind: d.Kind, Topic: d.Topic, Title: d.Title}, d.meta.reviewed)
		seen := make(map[string]bool)
		checks.ScanReferences(d.src.Data, d.body, d.Path, func(ref checks.PathRef) {
			if !seen[ref.Name] {
				seen[ref.Name] = true
				line, col := d.src.Position(ref.Off)
				dd.AddRef(ref, line, col)
			}
		})
		docs = append(docs, dd)
	}
	return docs, nil
}
