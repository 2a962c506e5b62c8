package query

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/kbqdev/kbq/artifact"
	"github.com/kbqdev/kbq/query/syntax"
)

// Age says who last changed a document's file, in which commit and when,
// as the build read git's history; Uncommitted marks a file built with
// changes not yet committed.
type Age struct {
	Updated     string `json:"updated,omitempty"` // RFC 3339
	Author      string `json:"author,omitempty"`
	Commit      string `json:"commit,omitempty"`
	Uncommitted bool   `json:"uncommitted,omitempty"`
}

// Location is the artifact's directory.
func (ix *Index) Location() string { return ix.Dir }

// Header returns the manifest of the artifact, without its documents.
func (ix *Index) Header() *artifact.Manifest { return ix.Manifest }

// CheckScopes returns ErrUnknownScope for a scope of scopes the artifact
// does not have.
func (ix *Index) CheckScopes(scopes []string) error {
	_, err := ix.selectedScopes(scopes, syntax.Parsed{})
	return err
}

// Text reassembles a document from its chunks, as written: the first
// chunk holds the frontmatter, and the chunks' byte spans cover the body,
// overlapping where long sections were split.
func (ix *Index) Text(ctx context.Context, meta artifact.Document) (front, body string, err error) {
	ev := ix.engine.newEval(ix.ranking, nil, 0)
	chunks, err := termNode{field: artifact.FieldPath, term: meta.Path}.match(ev, false)
	if err != nil {
		return "", "", fmt.Errorf("read %s: %w", meta.Path, err)
	}
	type piece struct {
		start, end int
		body       string
	}
	var pieces []piece
	for doc, ok := chunks.NextSet(0); ok; doc, ok = chunks.NextSet(doc + 1) {
		var p piece
		var perr error
		err := ix.engine.visitStored(uint64(doc), nil, func(field string, value []byte) bool {
			switch field {
			case artifact.FieldBody:
				p.body = string(value)
			case artifact.FieldSpan:
				p.start, p.end, perr = parseRange(field, value)
			case artifact.FieldFrontmatter:
				front = string(value)
			}
			return perr == nil
		})
		if err == nil {
			err = perr
		}
		if err != nil {
			return "", "", fmt.Errorf("read %s: %w", meta.Path, err)
		}
		pieces = append(pieces, p)
	}
	if len(pieces) == 0 {
		return "", "", fmt.Errorf("%w: %s is in the manifest but not in the index: rebuild with kbc build", artifact.ErrCorrupt, meta.Path)
	}
	slices.SortFunc(pieces, func(a, b piece) int { return a.start - b.start })
	var text strings.Builder
	at := pieces[0].start
	for _, p := range pieces {
		if p.end <= at {
			continue
		}
		skip := max(at-p.start, 0)
		if skip > len(p.body) {
			continue
		}
		text.WriteString(p.body[skip:])
		at = p.end
	}
	return front, text.String(), nil
}
