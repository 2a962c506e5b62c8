package compiler

import (
	"github.com/kbqdev/kbq/knowledge"
)

// Validate checks data as the knowledge file at inner, its path inside a
// project's .kb/ directory (memories/001-x.md, deploy/steps.md), as a
// build would, and returns the diagnostics, which name inner.
func Validate(inner string, data []byte) Diagnostics {
	loc, _ := knowledge.ClassifyInner(inner)
	loc.Scope = knowledge.ScopeProject
	return parseDocument(input{path: knowledge.Dir + "/" + inner, display: inner, loc: loc, data: data}).diags
}
