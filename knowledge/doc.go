// Package knowledge is the registry of kbq's knowledge model: how .kb/
// directories are laid out, how scopes are named and ordered, and every
// kind of document with its place, its frontmatter keys and its rules.
//
// Everything that needs to know a kind, a scope or a frontmatter key asks
// this package: the compiler classifies paths with Classify and attaches
// its validators to the keys named here; the writers of knowledge (package
// authoring) name memories with MemoryName; the readers generate their
// help text and MCP tool schemas from Kinds and Keys; the query language
// takes its generic filters from Keys. The package parses no YAML, so the
// read-only kbq binary links it too.
//
// A new optional frontmatter key whose value is text is one entry in keys
// (keys.go): the compiler validates it, the artifact stores it in a
// document's Meta, every front door shows it, and, with Filter set, queries
// filter on it (owner:platform). A new kind is one entry in kinds
// (kinds.go) and a case for its behaviour where it has any.
package knowledge
