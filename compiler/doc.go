// Package compiler turns a repository's markdown knowledge into a kbq
// artifact, and validates it like a compiler.
//
// A build lists the knowledge files of a Source (a commit, git's index, the
// working tree, and the personal global scope), classifies each by where it
// lives (context, memory, article, topic, attachment; collect.go, with
// package knowledge's classify.go), parses its frontmatter and markdown
// into chunks (document.go, frontmatter.go, validate.go, chunk.go), runs
// the checks of package compiler/checks on them (secrets, dead
// references, duplicates, supersession, and between documents memory ids,
// attachments and context budgets; checkinput.go gives them what they
// need), and writes segments: Bluge's ice format for stored fields and
// dictionaries, beside kbq's own postings with block bounds
// (indexbuild.go, index.go, segments.go, merge.go). publish.go makes the
// new index and manifest current atomically under a lock.
//
// An incremental build (incremental.go) keeps the previous index's segments,
// compiles only documents whose blob or shadowing changed, and marks the
// chunks they replace deleted; past a share of deletions it builds from
// scratch. The worktree record (worktree.go) lets kbq tell when the files
// moved on since.
//
// Check validates without writing; Diff lists documents added, changed and
// removed between two sources; Validate checks one file for the writers of
// knowledge (package authoring). A project's .kb/config.yaml shapes all of
// them (config.go). Diagnostics carry file:line:col positions (package
// checks' diag.go); the commands render them. Drift (drift.go) follows the
// knowledge of a commit back through its history with checks.DriftWalk.
package compiler
