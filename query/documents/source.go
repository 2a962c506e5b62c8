// Package documents reads whole documents, listings and the always-loaded
// context of a directory from a Source: the artifact (a *query.Index), or
// any other store of compiled knowledge that keeps each document's
// metadata and text. The search engine is package query; the query
// language, package query/syntax.
package documents

import (
	"context"
	"errors"

	"github.com/kbqdev/kbq/artifact"
)

// ErrNotFound means a document does not exist.
var ErrNotFound = errors.New("not found")

// A Source holds compiled documents.
type Source interface {
	// Documents lists every document.
	Documents() ([]artifact.Document, error)
	// Text returns a document as written: its frontmatter and its body.
	Text(ctx context.Context, d artifact.Document) (front, body string, err error)
	// Header is what was compiled with the documents: which are retired,
	// and the context budgets.
	Header() *artifact.Manifest
	// CheckScopes returns an error wrapping query.ErrUnknownScope for a
	// scope of scopes that holds no document.
	CheckScopes(scopes []string) error
}
