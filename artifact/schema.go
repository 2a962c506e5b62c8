package artifact

import (
	"math"
	"strings"
)

// Index fields. Every chunk of every document is one Bluge document. The
// chunks have no _id field: Bluge's writer needs it to update documents in
// place, which an artifact never is, and a unique term per chunk cost 7% of
// a build. Path and chunk identify a chunk.
const (
	// Keyword fields, indexed as exact terms.
	FieldPath = "path" // stored
	// FieldFacet holds the terms filters match: FacetKind, FacetTopic,
	// FacetScope, FacetTag and FacetShadowedBy values. One field with several terms is
	// much cheaper to index than a field for each.
	FieldFacet = "facet"

	// Text fields, analyzed with the artifact's Analysis and scored with BM25.
	FieldTitle   = "title"   // the document title and the topic's words
	FieldHeading = "heading" // stored: heading trail, "Deploy > Rollback"
	FieldTags    = "tags"    // stored: tags joined by TagSeparator
	FieldBody    = "body"    // stored: the chunk's markdown, exactly as in the source

	// Stored-only fields.
	FieldTopic        = "topic"
	FieldKind         = "kind"
	FieldScope        = "scope"
	FieldDisplayTitle = "doc_title"   // the document title
	FieldLines        = "lines"       // "start-end", 1-based source lines, inclusive
	FieldSpan         = "span"        // "start-end", byte range of the body in the normalized source
	FieldFrontmatter  = "frontmatter" // first chunk only: the source before the body
	FieldImportance   = "importance"  // decimal in [0,1], when the document sets it
	FieldSource       = "source"      // the document's source (memories, articles)
	FieldChunk        = "chunk"       // ordinal of the chunk in its document
	FieldBlob         = "blob"        // first chunk only: the git blob hash of the document's file
)

// TextFields lists the scored fields, in the order queries search them.
var TextFields = []string{FieldTitle, FieldHeading, FieldTags, FieldBody}

// TagSeparator joins a document's tags in the stored tags field.
const TagSeparator = "\x1f"

// Document kinds.
const (
	KindContext    = "context"
	KindMemory     = "memory"
	KindArticle    = "article"
	KindTopic      = "topic"
	KindAttachment = "attachment"
)

// Kinds lists the kinds of indexed documents.
var Kinds = []string{KindContext, KindMemory, KindArticle, KindTopic}

// Scope names. A directory scope is named by its slash-separated path from
// the repository root; the root's .kb/ is the project scope, and the personal
// knowledge directory the global scope. A top-level directory that happens to
// be called "global" or "project" is named "./global" or "./project".
const (
	ScopeGlobal  = "global"
	ScopeProject = "project"
)

// ScopeName returns the scope name of the .kb/ directory (or agent context
// file) found in dir, a slash-separated path relative to the repository root
// ("" or "." for the root).
func ScopeName(dir string) string {
	switch dir {
	case "", ".":
		return ScopeProject
	case ScopeGlobal, ScopeProject:
		return "./" + dir
	}
	return dir
}

// ScopeDir is the inverse of ScopeName for repository scopes: the directory
// the scope applies to, "" for the project scope. ok is false for the global
// scope.
func ScopeDir(scope string) (dir string, ok bool) {
	switch scope {
	case ScopeGlobal:
		return "", false
	case ScopeProject:
		return "", true
	}
	return strings.TrimPrefix(scope, "./"), true
}

// ScopeDepth orders scopes by precedence: global 0, project 1, then one more
// for every directory level.
func ScopeDepth(scope string) int {
	dir, ok := ScopeDir(scope)
	switch {
	case !ok:
		return 0
	case dir == "":
		return 1
	}
	return 2 + strings.Count(dir, "/")
}

// ScopeContains reports whether scope applies to dir, a slash-separated path
// relative to the repository root ("" for the root).
func ScopeContains(scope, dir string) bool {
	sdir, ok := ScopeDir(scope)
	switch {
	case !ok || sdir == "":
		return true
	case dir == sdir:
		return true
	}
	return strings.HasPrefix(dir, sdir+"/")
}

// GlobalPathPrefix starts the path of every global-scope document, which lives
// outside the repository: "global:notes/x.md".
const GlobalPathPrefix = "global:"

// EncodeNorm is how a field's length (its number of terms) is stored in the
// index as Bluge's per-document norm.
func EncodeNorm(length int) float32 { return math.Float32frombits(uint32(length)) }

// ImportanceFactor is what a document's importance, 0 to 1, multiplies
// its scores by: 0.9 to 1.1, and 1 for the neutral 0.5 that documents
// without importance have.
func ImportanceFactor(importance float64) float64 {
	return 1 + 0.2*(min(max(importance, 0), 1)-0.5)
}

// DecodeNorm returns the field length stored by EncodeNorm.
func DecodeNorm(norm float64) int { return int(math.Float32bits(float32(norm))) }

// Facet terms. FacetShadowedBy names a scope whose document of the same
// topic hides this one from queries made inside that scope.
func FacetKind(kind string) string        { return "kind=" + kind }
func FacetTopic(topic string) string      { return "topic=" + topic }
func FacetScope(scope string) string      { return "scope=" + scope }
func FacetTag(tag string) string          { return "tag=" + strings.ToLower(tag) }
func FacetShadowedBy(scope string) string { return "shadowed=" + scope }
