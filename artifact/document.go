package artifact

// Document is one compiled document: a row of the document table
// (doctable.go), whose codec is generated from this type (go generate), so
// that a field added here is stored. Fields tagged store:"ages" live in the
// ages table (ages.go) instead, because a build may change them without
// changing the index. A field added later is tagged with the table version
// that added it (table:"2"): older tables are read without it.
type Document struct {
	Path       string   `json:"path"`
	Scope      string   `json:"scope"`
	Kind       string   `json:"kind"`
	Topic      string   `json:"topic"`
	Blob       string   `json:"blob"`
	ID         int      `json:"id,omitempty"` // memories only
	Title      string   `json:"title,omitempty"`
	Tags       []string `json:"tags,omitempty"`
	Source     string   `json:"source,omitempty"`
	ShadowedBy []string `json:"shadowed_by,omitempty"`
	// Importance is the document's importance, 0 to 1, when it sets one.
	Importance *float64 `json:"importance,omitempty"`
	// Created is when a memory was created or an article fetched, and
	// Expires when the document sets a date past which kbc prune may
	// remove it: RFC 3339 timestamps, or "".
	Created string `json:"created,omitempty"`
	Expires string `json:"expires,omitempty"`
	// Status is the document's own status, "" for active: draft,
	// deprecated or superseded.
	Status string `json:"status,omitempty"`
	// Supersedes lists the documents it replaces, as written: topic keys
	// or memory:ID.
	Supersedes []string `json:"supersedes,omitempty"`
	// Contradicts lists the documents it disputes, as written: topic keys
	// or memory:ID. Both stay searchable, marked disputed, until one is
	// superseded.
	Contradicts []string `json:"contradicts,omitempty" table:"3"`
	// Meta holds the values of the registry's Meta keys the document sets
	// (knowledge.MetaKeys), by key.
	Meta map[string]string `json:"meta,omitempty"`
	// Commit, Author and Updated say which commit last changed the
	// document's file, whose change it was and when it landed (the
	// committer's time, RFC 3339 in UTC), along the first-parent history
	// of the commit built; Uncommitted marks a file the build read changed
	// since then. All empty for the global scope, which is not in the
	// repository.
	Commit      string `json:"commit,omitempty" store:"ages"`
	Author      string `json:"author,omitempty" store:"ages"`
	Updated     string `json:"updated,omitempty" store:"ages"`
	Uncommitted bool   `json:"uncommitted,omitempty" store:"ages"`
	Chunks      int    `json:"chunks"`
	// Headings, for a context document, are its top-level headings as the
	// markdown parser reads them (so that kbq context shifts exactly those,
	// and no line of a code block): each line<<8 | lines<<4 | setext<<3 |
	// level, with line the heading's first line in the body (from 0),
	// lines how many lines its text takes (a setext heading's underline
	// follows them) and setext 1 for an underlined heading; a last 0 says
	// they were recorded (none, for a document of only that). Tables of
	// version 1 (KBQDOC01) lack it.
	Headings []uint32 `json:"headings,omitempty" table:"2"`
	// Fields are the document's statistics for each text field.
	Fields DocFields `json:"fields"`
	// Seg and Doc locate the document's chunks in the index: segment Seg,
	// document numbers Doc to Doc+Chunks-1.
	Seg uint64 `json:"seg"`
	Doc uint32 `json:"doc"`
}
