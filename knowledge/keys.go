package knowledge

import (
	"slices"
	"sort"
	"strings"
)

// Type is the type of a frontmatter key's value.
type Type int

const (
	Text      Type = iota // one line of text
	TextList              // a list of strings, or one comma-separated string
	Integer               // an integer ≥ 1
	Number                // a number from 0 to 1
	Date                  // an ISO 8601 date or timestamp
	Timestamp             // an RFC 3339 timestamp with a zone
	URL                   // an absolute URL
	Refs                  // topic keys or memory:ID, one or a list
	Status                // one of Statuses
	Path                  // a path under attachments/
)

// Key describes one frontmatter key.
type Key struct {
	Name string
	Type Type
	// Doc says in one line what the key means.
	Doc string
	// Meta keys are kept as written in the document's Meta, shown with it
	// by every front door, and need no code of their own. They are Text.
	Meta bool
	// Filter makes a Meta key a query filter: NAME:value matches the
	// documents whose value is value, ignoring case.
	Filter bool
}

// MaxMetaValue bounds a Meta key's value, in bytes.
const MaxMetaValue = 256

// Statuses are the values of status:; "active" is the default.
var Statuses = []string{"active", "draft", "deprecated", "superseded"}

var keys = []Key{
	{Name: "title", Type: Text, Doc: "the document's title (default: its first level-1 heading)"},
	{Name: "description", Type: Text, Doc: "a summary, searched with the title"},
	{Name: "tags", Type: TextList, Doc: "labels that tag:x filters match"},
	{Name: "status", Type: Status, Doc: "active, draft, deprecated or superseded; deprecated and superseded documents leave searches"},
	{Name: "supersedes", Type: Refs, Doc: "the documents this one replaces: topic keys or memory:ID"},
	{Name: "contradicts", Type: Refs, Doc: "the documents this one disputes: topic keys or memory:ID; both stay searchable, marked disputed, until one is superseded"},
	{Name: "reviewed", Type: Date, Doc: "when a person last checked the document against the code"},
	{Name: "owner", Type: Text, Doc: "who answers for the document: a team or a person", Meta: true, Filter: true},
	{Name: "version", Type: Integer, Doc: "the context file's version, raised on every change"},
	{Name: "updated", Type: Date, Doc: "when the context file last changed"},
	{Name: "id", Type: Integer, Doc: "the memory's number, the NNN of its file name"},
	{Name: "created", Type: Timestamp, Doc: "when the memory was written"},
	{Name: "fetched", Type: Date, Doc: "when the article was fetched"},
	{Name: "expires", Type: Date, Doc: "when kbc prune may remove the document"},
	{Name: "source", Type: Text, Doc: "where the knowledge came from: an article's URL, or user-told, extracted"},
	{Name: "importance", Type: Number, Doc: "0 to 1; scores are multiplied by 0.9 to 1.1 (0.5 is neutral)"},
	{Name: "attachment", Type: Path, Doc: "the file under attachments/ the article was made from"},
}

// Keys returns every frontmatter key kbq knows.
func Keys() []Key { return slices.Clone(keys) }

// LookupKey returns the key named name.
func LookupKey(name string) (Key, bool) {
	for _, k := range keys {
		if k.Name == name {
			return k, true
		}
	}
	return Key{}, false
}

// MetaKeys returns the Meta keys, sorted by name.
func MetaKeys() []Key {
	var ks []Key
	for _, k := range keys {
		if k.Meta {
			ks = append(ks, k)
		}
	}
	sort.Slice(ks, func(i, j int) bool { return ks[i].Name < ks[j].Name })
	return ks
}

// IsFilter reports whether name is a Meta key queries filter on.
func IsFilter(name string) bool {
	k, ok := LookupKey(strings.ToLower(name))
	return ok && k.Meta && k.Filter
}

// FilterHelp documents the Meta filters for help text, a line each,
// starting with pad.
func FilterHelp(indent string) string {
	var b strings.Builder
	for _, k := range MetaKeys() {
		if k.Filter {
			b.WriteString(indent + pad(k.Name+":VALUE", 23) + "documents whose " + k.Name + ": is VALUE, in any case\n")
		}
	}
	return b.String()
}
