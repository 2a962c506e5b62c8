package compiler

import "github.com/kbqdev/kbq/compiler/checks"

// The diagnostics of a build are package checks' own.
type (
	Severity    = checks.Severity
	Diagnostic  = checks.Diagnostic
	Diagnostics = checks.Diagnostics
	reporter    = checks.Report
	// Similar is a document that may duplicate one a check read.
	Similar = checks.Similar
)

// DefaultDuplicateThreshold is the share of word triples two documents
// must have in common for kbc check to call one a near duplicate.
const DefaultDuplicateThreshold = checks.DefaultDuplicateThreshold

// The severities of a diagnostic.
const (
	Error   = checks.Error
	Warning = checks.Warning
)
