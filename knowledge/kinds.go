package knowledge

import (
	"slices"
	"strings"
)

// Document kinds.
const (
	KindContext    = "context"
	KindMemory     = "memory"
	KindArticle    = "article"
	KindTopic      = "topic"
	KindAttachment = "attachment"
)

// MemoriesDir is the directory of .kb/ that holds memories.
const MemoriesDir = "memories"

// Kind describes one kind of document: where it lives, what its
// frontmatter holds and how it is named and retired.
type Kind struct {
	Name string
	// Description says in one line what documents of the kind are for.
	Description string
	// Place says in one line where documents of the kind live.
	Place string
	// Dir, when set, is the directory of .kb/ that holds the kind: its
	// markdown files directly inside are of the kind. File, when set, is
	// the one file of .kb/ that is of the kind. A kind with neither takes
	// the knowledge files no other kind claims.
	Dir, File string
	// Required and Optional name the frontmatter keys the kind knows
	// (keys.go). Other keys are allowed and ignored.
	Required, Optional []string
	// FrontmatterOptional says that a document of the kind may have no
	// frontmatter at all; Required then applies only when it has some.
	FrontmatterOptional bool
	// RequiredHint says what a document missing required keys needs.
	RequiredHint string
	// ID says how a document of the kind is referred to.
	ID string
	// Expiry says when a document of the kind is retired.
	Expiry string
	// Indexed kinds are searched; the others are only checked.
	Indexed bool
	// AnyFile kinds hold files of every type, not only knowledge text.
	AnyFile bool
}

// lifecycle are the keys every indexed kind knows.
var lifecycle = []string{"title", "description", "tags", "status", "supersedes", "contradicts", "reviewed", "owner"}

var kinds = []Kind{
	{
		Name:                KindContext,
		Description:         "always-loaded rules and conventions for a directory and everything below it",
		Place:               ".kb/context.md, and AGENTS.md, CLAUDE.md or GEMINI.md in any directory",
		File:                "context.md",
		Required:            []string{"version", "updated"},
		Optional:            lifecycle,
		FrontmatterOptional: true,
		RequiredHint:        "context frontmatter, when present, needs version and updated",
		ID:                  "its path; the directory it stands in is its scope",
		Expiry:              "never expires: edit or remove it",
		Indexed:             true,
	},
	{
		Name:         KindMemory,
		Description:  "a fact, decision or lesson an agent or a person wrote down while working",
		Place:        ".kb/memories/NNN-slug.md",
		Dir:          MemoriesDir,
		Required:     []string{"id", "created"},
		Optional:     append([]string{"expires", "source", "importance"}, lifecycle...),
		RequiredHint: "memories need id and created",
		ID:           "memory:ID, where id: is an integer ≥ 1 and the file name's NNN (kbc remember assigns the next)",
		Expiry:       "expires: DATE, after which kbc prune removes it; superseded or deprecated ones age out too",
		Indexed:      true,
	},
	{
		Name:         KindArticle,
		Description:  "a copy of an outside page, with where and when it was fetched",
		Place:        ".kb/articles/*.md",
		Dir:          "articles",
		Required:     []string{"source", "fetched"},
		Optional:     append([]string{"expires", "attachment", "importance"}, lifecycle...),
		RequiredHint: "articles need source and fetched",
		ID:           "its topic key, articles/NAME",
		Expiry:       "expires: DATE, after which kbc prune removes it",
		Indexed:      true,
	},
	{
		Name:        KindTopic,
		Description: "a note on one subject: a procedure, a design, a reference",
		Place:       "any other .md, .txt or .html file under .kb/ (deploy/steps.md is topic deploy/steps)",
		Optional:    append([]string{"expires", "source", "importance"}, lifecycle...),
		ID:          "its topic key, the path inside .kb/ without the extension; deeper scopes' topics hide shallower ones of the same key",
		Expiry:      "expires: DATE, after which kbc prune removes it",
		Indexed:     true,
	},
	{
		Name:        KindAttachment,
		Description: "a file an article refers to (an image, a PDF); checked, not searched",
		Place:       ".kb/attachments/**",
		Dir:         "attachments",
		ID:          "its path under attachments/, named by an article's attachment:",
		Expiry:      "removed with the last article that names it",
		AnyFile:     true,
	},
}

// Kinds returns every kind, in the order documents are presented.
func Kinds() []Kind { return slices.Clone(kinds) }

// LookupKind returns the kind named name.
func LookupKind(name string) (Kind, bool) {
	for _, k := range kinds {
		if k.Name == name {
			return k, true
		}
	}
	return Kind{}, false
}

// IndexedKinds names the kinds that are searched.
func IndexedKinds() []string {
	var names []string
	for _, k := range kinds {
		if k.Indexed {
			names = append(names, k.Name)
		}
	}
	return names
}

// KindList names the indexed kinds for help text: "context, memory,
// article or topic" with conj "or".
func KindList(conj string) string {
	names := IndexedKinds()
	return strings.Join(names[:len(names)-1], ", ") + " " + conj + " " + names[len(names)-1]
}

// Knows reports whether a document of the kind reads frontmatter key.
func (k Kind) Knows(key string) bool {
	return slices.Contains(k.Required, key) || slices.Contains(k.Optional, key)
}

// IsRequired reports whether a document of the kind must set key.
func (k Kind) IsRequired(key string) bool { return slices.Contains(k.Required, key) }

// CanExpire reports whether a document of the kind may set expires:.
func (k Kind) CanExpire() bool { return k.Knows("expires") }

// RequiredBy reports whether a kind requires frontmatter key, and which.
func RequiredBy(key string) (kind string, required bool) {
	for _, k := range kinds {
		if slices.Contains(k.Required, key) {
			return k.Name, true
		}
	}
	return "", false
}
