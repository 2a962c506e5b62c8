// Package query answers questions from a kbq artifact: searches ranked with
// BM25, whole documents, listings, the always-loaded context of a
// directory, and statistics. It only reads; it imports neither the compiler
// nor go-git, so the kbq binary stays small.
//
// Search results do not depend on how the artifact was built: collection
// statistics come from the manifest (live chunks only) and ties are broken
// by path, so an incremental build answers exactly like a full one.
package query
