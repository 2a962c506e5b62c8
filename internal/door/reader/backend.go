package reader

import (
	"context"
	"time"

	"github.com/kbqdev/kbq/artifact"
	"github.com/kbqdev/kbq/query"
	"github.com/kbqdev/kbq/query/documents"
)

// A Backend is what kbq reads: the command line, the HTTP API and the MCP
// tools search, get, list, assemble context and count through it alone,
// with the same requests. *Artifacts implements it for one artifact, for
// several read as one, and for the repositories of a PostgreSQL database
// (fetched into artifacts); a store that ranks as the artifact does may
// implement it too.
type Backend interface {
	// Search ranks req's results.
	Search(ctx context.Context, req query.Request) (*query.Response, error)
	// Get finds one document.
	Get(ctx context.Context, req GetRequest) (*documents.Document, error)
	// List lists documents, each naming its repository when several are
	// read.
	List(ctx context.Context, req documents.ListRequest) ([]documents.Listed, error)
	// Context assembles the always-loaded context of a directory of one
	// repository.
	Context(ctx context.Context, req ContextRequest) (*documents.ContextResult, error)
	// Stats reports counts, size, version and age.
	Stats(now time.Time) (*query.Stats, error)

	// Mode is the search mode req runs in, and Models the embedding
	// models of the vectors: a query is embedded once by each
	// (Embedder.Vectorize).
	Mode(req query.Request) string
	Models() []artifact.Embeddings
	// Parts are the artifacts read, by name: one artifact is a union of
	// one, named "". Use is recorded in each one's own log.
	Parts() []query.Part
}

// A GetRequest names a document: a path, a topic key or memory:ID, each
// optionally after REPO: when several repositories are read. Dir, a
// repository path, decides which scope's topic wins.
type GetRequest struct {
	Ref string
	Dir string
}

// A ContextRequest asks for the context in force in Dir, a directory of
// the repository Repo ("" when one is read).
type ContextRequest struct {
	Repo string
	Dir  string
	documents.ContextOptions
	// Usage, when set and the knowledge index lists documents, ranks
	// them by their recent use.
	Usage *Usage
}

// The artifacts are a Backend.
var _ Backend = (*Artifacts)(nil)
