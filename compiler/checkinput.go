package compiler

import (
	"bytes"
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/kbqdev/kbq/artifact"
	"github.com/kbqdev/kbq/compiler/checks"
	"github.com/kbqdev/kbq/knowledge"
)

// What the checks between documents (package checks) are given of a
// build or a check: facts of each document read, and the supersession
// graph of every document listed.

// factsOf is what the checks between documents need of d.
func factsOf(d *document, display string) checks.Facts {
	f := checks.Facts{Path: d.Path, Display: display, Scope: d.Scope, Kind: d.Kind, Blob: d.Blob,
		ID: d.meta.id, IDLine: d.meta.idLine, IDCol: d.meta.idCol,
		Attachment: d.meta.attachment, AttLine: d.meta.attLine, AttCol: d.meta.attCol,
		Supersedes: d.meta.supersedes, Contradicts: d.meta.contradicts, Status: d.meta.status}
	if d.src != nil {
		f.BodyBytes = len(bytes.TrimSpace(d.src.Data[d.body:]))
	}
	return f
}

// superseders lists every document of the listing for the supersession
// check: what was read this time from facts, with the positions of its
// references; what was not, from the previous artifact's documents (prev,
// by path; nil for none), a memory's id else from its file name.
func superseders(l *listing, facts []checks.Facts, prev map[string]artifact.Document) []checks.Superseder {
	if !slices.ContainsFunc(facts, func(f checks.Facts) bool { return len(f.Supersedes)+len(f.Contradicts) > 0 }) &&
		!slices.ContainsFunc(slices.Collect(maps.Values(prev)), func(d artifact.Document) bool { return len(d.Supersedes)+len(d.Contradicts) > 0 }) {
		return nil // nothing supersedes anything: nothing to check
	}
	read := make(map[string]checks.Facts, len(facts))
	for _, f := range facts {
		read[f.Path] = f
	}
	out := make([]checks.Superseder, 0, len(l.docs))
	for _, c := range l.docs {
		s := checks.Superseder{Path: c.path(), Display: c.display(), Scope: c.loc.Scope, Kind: c.loc.Kind, Topic: c.loc.Topic}
		if f, ok := read[c.path()]; ok {
			s.ID, s.Refs, s.Disputes, s.Status = f.ID, f.Supersedes, f.Contradicts, f.Status
		} else if p, ok := prev[c.path()]; ok {
			s.ID, s.Status = p.ID, p.Status
			for _, t := range p.Supersedes {
				s.Refs = append(s.Refs, checks.Ref{Text: t})
			}
			for _, t := range p.Contradicts {
				s.Disputes = append(s.Disputes, checks.Ref{Text: t})
			}
		}
		if s.ID == 0 && s.Kind == knowledge.KindMemory {
			name := path.Base(c.path())
			s.ID, _ = strconv.Atoi(name[:len(name)-len(strings.TrimLeft(name, "0123456789"))])
		}
		out = append(out, s)
	}
	return out
}
