package answer

import (
	"context"
	"time"

	"github.com/kbqdev/kbq/artifact"
	"github.com/kbqdev/kbq/query"
	"github.com/kbqdev/kbq/query/documents"
)

// A Backend is what kbq answers from: an artifact's index (*query.Index),
// or another store of compiled knowledge that ranks as the artifact does.
// The front doors (the command line, HTTP and MCP) search, read and
// render through it alone.
type Backend interface {
	// Documents, Text, Header and CheckScopes serve package documents:
	// get, list and context.
	documents.Source
	// Search ranks req's results.
	Search(ctx context.Context, req query.Request) (*query.Response, error)
	// Mode is the search mode req runs in.
	Mode(req query.Request) string
	// Models are the embedding models of its vectors: a query is embedded
	// once by each.
	Models() []artifact.Embeddings
	// Blobs returns the blob of each result's document, "" when unknown.
	Blobs(results []query.Result) []string
	// Location names where the knowledge is kept, for the usage log: the
	// artifact's directory.
	Location() string
	// Stats reports counts, size, version and age.
	Stats(now time.Time) (*query.Stats, error)
	// Parts are the artifacts it reads, by name: one artifact is a union
	// of one, named "".
	Parts() []query.Part
}

// The artifact is a Backend.
var _ Backend = (*query.Index)(nil)
