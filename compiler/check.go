package compiler

import (
	"context"
	"strings"

	"github.com/kbqdev/kbq/artifact"
	"github.com/kbqdev/kbq/compiler/checks"
	"github.com/kbqdev/kbq/knowledge"
)

// CheckOptions configure a check.
type CheckOptions struct {
	Options
	// Paths, when not nil, limits the check to these files and the files
	// below these directories (repository-relative, slash-separated). The
	// documents the checks between documents need are still read.
	Paths []string
	// DuplicateThreshold, when above 0, has memories and topics that share
	// that much of their word triples with another of their scope reported.
	DuplicateThreshold float64
	// Similar, when set, finds documents of scope like body that the check
	// does not read (it reads only the memories and context beside the
	// files of Paths), for the duplicate check.
	Similar func(scope, path, body string) ([]Similar, error)
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
	if err := opts.Resolve(src); err != nil {
		return nil, err
	}
	l, err := collect(src, &opts.Options)
	if err != nil {
		return nil, err
	}
	selected := func(display string) bool { return opts.Paths == nil || UnderAny(display, opts.Paths) }
	todo := checkTodo(l, selected)
	res := &CheckResult{}
	if selected(ConfigPath) {
		res.Diagnostics = append(res.Diagnostics, opts.Config.Diagnostics...)
	}
	for _, d := range l.diags {
		if selected(d.Path) {
			res.Diagnostics = append(res.Diagnostics, d)
		}
	}
	var facts []checks.Facts
	var dups []checks.DupDoc
	parse := func(c candidate) (parsed, error) {
		d, err := l.readAndParse(c, &opts.Options)
		return parsed{doc: d, display: c.display()}, err
	}
	sink := func(p parsed) error {
		facts = append(facts, factsOf(p.doc, p.display))
		if d := p.doc; opts.DuplicateThreshold > 0 && checks.DupKind(d.Kind) && d.src != nil && !d.failed() {
			body := string(d.src.Data[d.body:])
			set, short := checks.TextSet(body)
			dd := checks.DupDoc{Path: d.Path, Display: p.display, Scope: d.Scope, Line: d.src.LineOf(d.body), Set: set, Short: short, Checked: selected(p.display)}
			if dd.Checked {
				dd.Body = body
			}
			dups = append(dups, dd)
		}
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
	cross, _ := checks.Cross(facts, l.attachments, opts.budgets())
	sup := superseders(l, facts, nil)
	cross = append(cross, checks.Supersession(sup)...)
	cross = append(cross, checks.Disputes(sup)...)
	for _, d := range cross {
		if selected(d.Path) {
			res.Diagnostics = append(res.Diagnostics, d)
		}
	}
	threshold := 0
	if opts.Config != nil {
		threshold = opts.Config.CompactThreshold
	}
	res.Diagnostics = append(res.Diagnostics, checks.LargeCategories(facts, threshold, opts.Paths == nil, selected)...)
	if opts.DuplicateThreshold > 0 {
		if opts.Similar != nil && opts.Paths != nil {
			var err error
			if dups, err = checks.AddSimilar(dups, opts.Similar); err != nil {
				return nil, err
			}
		}
		res.Diagnostics = append(res.Diagnostics, checks.Duplicates(dups, opts.DuplicateThreshold)...)
	}
	res.Diagnostics.Sort()
	return res, nil
}

// checkTodo lists the files a check reads: those selected, and the
// memories and context of their scopes, which the checks of duplicate ids
// and context budgets need.
func checkTodo(l *listing, selected func(display string) bool) []candidate {
	scopes := make(map[string]bool)
	for _, c := range l.docs {
		if selected(c.display()) {
			scopes[c.loc.Scope] = true
		}
	}
	var todo []candidate
	for _, c := range l.docs {
		related := scopes[c.loc.Scope] && (c.loc.Kind == knowledge.KindMemory || c.loc.Kind == knowledge.KindContext)
		if selected(c.display()) || related {
			todo = append(todo, c)
		}
	}
	return todo
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
