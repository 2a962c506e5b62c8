package artifact

import (
	"bytes"
	"maps"
	"math"
	"slices"
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
	FieldMeta         = "meta"        // the document's Meta keys, as EncodeMeta writes them
)

// TextFields lists the scored fields, in the order queries search them.
var TextFields = []string{FieldTitle, FieldHeading, FieldTags, FieldBody}

// TagSeparator joins a document's tags in the stored tags field.
const TagSeparator = "\x1f"

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

// EncodeMeta writes a document's Meta keys for the stored meta field:
// key, unit separator, value, record separator, sorted by key.
func EncodeMeta(meta map[string]string) []byte {
	var b []byte
	for _, k := range slices.Sorted(maps.Keys(meta)) {
		b = append(append(append(append(b, k...), 0x1f), meta[k]...), 0x1e)
	}
	return b
}

// DecodeMeta reads what EncodeMeta wrote; nil for nothing.
func DecodeMeta(b []byte) map[string]string {
	var m map[string]string
	for len(b) > 0 {
		rec, rest, _ := bytes.Cut(b, []byte{0x1e})
		k, v, _ := bytes.Cut(rec, []byte{0x1f})
		if m == nil {
			m = make(map[string]string)
		}
		m[string(k)] = string(v)
		b = rest
	}
	return m
}

// FacetMeta is the facet term of a Meta key that queries filter on
// (knowledge.Key.Filter): the key, "=" and the value, lowercased.
func FacetMeta(key, value string) string { return key + "=" + strings.ToLower(value) }
