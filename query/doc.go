// Package query is kbq's search engine over an artifact: it opens the
// index (Open, Live), plans what package query/syntax parses, finds the
// top k with BM25 and block bounds, fuses the semantic channel, and cuts
// snippets; it also reads each document's text and age, and the
// artifact's statistics. Whole documents, listings and context are
// package query/documents; evaluation, package query/evals. It only
// reads; it imports neither the compiler nor go-git, so the kbq binary
// stays small.
//
// Search results do not depend on how the artifact was built: collection
// statistics come from the manifest (live chunks only) and ties are broken
// by path, so an incremental build answers exactly like a full one.
package query
