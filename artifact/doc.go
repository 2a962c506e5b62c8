// Package artifact defines the kbq artifact format shared by the compiler,
// which writes it, and the query side, which reads it: the manifest, the
// index schema (field names, scope and kind names) and the text analysis
// chain. It imports neither side.
//
// An artifact is a directory (.kbq/ by default) holding manifest.json and the
// Bluge index directory the manifest names. The manifest is replaced by an
// atomic rename, so a reader sees either the old or the new artifact, never a
// mix. FormatVersion changes whenever any of this changes meaning.
package artifact
