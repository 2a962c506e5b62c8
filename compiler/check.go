package compiler

import (
	"context"
	"strings"

	"github.com/kbqdev/kbq/artifact"
)

// CheckOptions configure a check.
type CheckOptions struct {
	Options
	// Paths, when not nil, limits the check to these files and the files
	// below these directories (repository-relative, slash-separated). The
	// documents the checks between documents need are still read.
	Paths []string
}

// CheckResult reports a check.
type CheckResult struct {
	Diagnostics Diagnostics
	Checked     int // documents validated
	// Documents describes the documents validated, in path order.
	Documents []artifact.Document
}

// Check validates the knowledge in src without building anything.
func Check(ctx context.Context, src Source, opts CheckOptions) (*CheckResult, error) {
	opts.defaults()
	l, err := collect(src, opts.Global, opts.ContextFiles)
	if err != nil {
		return nil, err
	}
	selected := func(display string) bool { return opts.Paths == nil || UnderAny(display, opts.Paths) }
	// Memories and context of the scopes being checked are needed for
	// duplicate ids and context budgets.
	scopes := make(map[string]bool)
	for _, c := range l.docs {
		if selected(c.display) {
			scopes[c.loc.scope] = true
		}
	}
	var todo []candidate
	for _, c := range l.docs {
		related := scopes[c.loc.scope] && (c.loc.kind == artifact.KindMemory || c.loc.kind == artifact.KindContext)
		if selected(c.display) || related {
			todo = append(todo, c)
		}
	}
	res := &CheckResult{}
	for _, d := range l.diags {
		if selected(d.Path) {
			res.Diagnostics = append(res.Diagnostics, d)
		}
	}
	var facts []docFacts
	parse := func(c candidate) (parsed, error) {
		d, err := readAndParse(c, opts.MaxFileSize)
		return parsed{doc: d, display: c.display}, err
	}
	sink := func(p parsed) error {
		facts = append(facts, factsOf(p.doc, p.display))
		if selected(p.display) {
			res.Checked++
			res.Diagnostics = append(res.Diagnostics, p.doc.diags...)
			res.Documents = append(res.Documents, p.doc.Document)
		}
		return nil
	}
	if err := orderedMap(ctx, todo, opts.Workers, 4*opts.Workers, parse, sink); err != nil {
		return nil, err
	}
	cross, _ := crossCheck(facts, l.attachments)
	for _, d := range cross {
		if selected(d.Path) {
			res.Diagnostics = append(res.Diagnostics, d)
		}
	}
	res.Diagnostics.Sort()
	return res, nil
}

// UnderAny reports whether p is one of paths or inside one of them.
func UnderAny(p string, paths []string) bool {
	for _, q := range paths {
		q = strings.TrimSuffix(q, "/")
		if q == "" || q == "." || p == q || strings.HasPrefix(p, q+"/") {
			return true
		}
	}
	return false
}
