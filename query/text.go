package query

import (
	"context"
	"fmt"
	"slices"
	"strconv"
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

// A Chunk is one chunk of a document as the artifact stores it.
type Chunk struct {
	Ordinal int    // its place in the document, from 0
	Heading string // the heading trail, "Deploy > Rollback"
	Lines   [2]int // 1-based source lines, inclusive
	Span    [2]int // the byte range of Body in the normalized source
	Body    string // the chunk's markdown, exactly as in the source
	// Frontmatter is the source before the body, on the first chunk only.
	Frontmatter string
}

// Chunks returns the chunks of a document, in order.
func (ix *Index) Chunks(ctx context.Context, meta artifact.Document) ([]Chunk, error) {
	return guarded(ix, func() ([]Chunk, error) { return ix.chunks(ctx, meta) })
}

func (ix *Index) chunks(ctx context.Context, meta artifact.Document) ([]Chunk, error) {
	ev := ix.engine.newEval(ix.ranking, nil, 0)
	ev.ctx = ctx
	found, err := termNode{field: artifact.FieldPath, term: meta.Path}.match(ev, false)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", meta.Path, err)
	}
	var chunks []Chunk
	for doc, ok := found.NextSet(0); ok; doc, ok = found.NextSet(doc + 1) {
		var c Chunk
		var perr error
		err := ix.engine.visitStored(uint64(doc), nil, func(field string, value []byte) bool {
			switch field {
			case artifact.FieldBody:
				c.Body = string(value)
			case artifact.FieldSpan:
				c.Span[0], c.Span[1], perr = parseRange(field, value)
			case artifact.FieldLines:
				c.Lines[0], c.Lines[1], perr = parseRange(field, value)
			case artifact.FieldHeading:
				c.Heading = string(value)
			case artifact.FieldChunk:
				c.Ordinal, perr = parseStored(field, value, strconv.Atoi)
			case artifact.FieldFrontmatter:
				c.Frontmatter = string(value)
			}
			return perr == nil
		})
		if err == nil {
			err = perr
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", meta.Path, err)
		}
		chunks = append(chunks, c)
	}
	if len(chunks) == 0 {
		return nil, fmt.Errorf("%w: %s is in the manifest but not in the index: rebuild with kbc build", artifact.ErrCorrupt, meta.Path)
	}
	slices.SortFunc(chunks, func(a, b Chunk) int { return a.Ordinal - b.Ordinal })
	return chunks, nil
}

// Text reassembles a document from its chunks, as written: the first
// chunk holds the frontmatter, and the chunks' byte spans cover the body,
// overlapping where long sections were split.
func (ix *Index) Text(ctx context.Context, meta artifact.Document) (front, body string, err error) {
	chunks, err := ix.Chunks(ctx, meta)
	if err != nil {
		return "", "", err
	}
	front, body = JoinChunks(chunks)
	return front, body, nil
}

// JoinChunks reassembles a document's text from its chunks.
func JoinChunks(chunks []Chunk) (front, body string) {
	if len(chunks) == 0 {
		return "", ""
	}
	pieces := slices.Clone(chunks)
	slices.SortFunc(pieces, func(a, b Chunk) int { return a.Span[0] - b.Span[0] })
	var text strings.Builder
	at := pieces[0].Span[0]
	for _, p := range pieces {
		front += p.Frontmatter
		if p.Span[1] <= at {
			continue
		}
		skip := max(at-p.Span[0], 0)
		if skip > len(p.Body) {
			continue
		}
		text.WriteString(p.Body[skip:])
		at = p.Span[1]
	}
	return front, text.String()
}

// Vectors returns the vectors of a document's chunks, in chunk order, as
// the artifact stores them (dequantized); nil when the artifact has none.
func (ix *Index) Vectors(meta artifact.Document) ([][]float32, error) {
	return guarded(ix, func() ([][]float32, error) { return ix.vectorsOf(meta) })
}

func (ix *Index) vectorsOf(meta artifact.Document) ([][]float32, error) {
	if ix.Manifest.Embeddings == nil {
		return nil, nil
	}
	v, err := ix.vectors()
	if err != nil {
		return nil, err
	}
	ix.firstRowOnce.Do(func() {
		docs, err := ix.Documents()
		if err != nil {
			ix.firstRowErr = err
			return
		}
		ix.firstRow = make(map[string]int, len(docs))
		row := 0
		for _, d := range docs {
			ix.firstRow[d.Path] = row
			row += d.Chunks
		}
	})
	if ix.firstRowErr != nil {
		return nil, ix.firstRowErr
	}
	first, ok := ix.firstRow[meta.Path]
	if !ok {
		return nil, fmt.Errorf("%w: %s has no vectors", artifact.ErrCorrupt, meta.Path)
	}
	out := make([][]float32, meta.Chunks)
	for i := range out {
		if first+i >= v.Count {
			return nil, fmt.Errorf("%w: %s's vectors run past the file", artifact.ErrCorrupt, meta.Path)
		}
		out[i] = artifact.Dequantize(nil, v.Row(first+i))
	}
	return out, nil
}
