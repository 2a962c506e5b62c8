// Package checks holds the compiler's checks of knowledge beyond parsing,
// each given plain facts of the documents and reporting file:line:col
// diagnostics: the secret guard (secrets.go), dead references to
// repository paths (references.go), near duplicates (duplicates.go),
// supersession (supersede.go), the rules between documents (crosscheck.go:
// memory ids, attachments, context budgets), categories large enough to
// compact (compactcheck.go), and drift against git history (drift.go).
// Package compiler parses the files and builds the index; it asks these.
package checks
