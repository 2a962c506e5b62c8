package reader

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/kbqdev/kbq/artifact"
	"github.com/kbqdev/kbq/query"
	"github.com/kbqdev/kbq/query/documents"
)

// Artifacts are one artifact or several read as one: the Backend of every
// door. One artifact is a union of one, named "": its paths are the
// repository's own. Several are named, searched as one (query.Union), and
// a document of repository R is R:REF to Get.
type Artifacts struct {
	parts []query.Part
	union *query.Union // nil for one unnamed artifact

	// Several's documents and header, gathered once.
	joinOnce sync.Once
	join     *joined
}

// One reads one artifact.
func One(ix *query.Index) *Artifacts {
	return &Artifacts{parts: ix.Parts()}
}

// NewArtifacts reads parts as one: their names must differ, and their
// artifacts analyze text alike. One part named "" is one artifact.
func NewArtifacts(parts []query.Part) (*Artifacts, error) {
	if len(parts) == 1 && parts[0].Name == "" {
		return One(parts[0].Index), nil
	}
	u, err := query.NewUnion(parts)
	if err != nil {
		return nil, err
	}
	return &Artifacts{parts: parts, union: u}, nil
}

// Parts are the artifacts read, by name.
func (a *Artifacts) Parts() []query.Part { return a.parts }

// Named reports whether the artifacts are read by repository name (several,
// or one of a list or a database): results and documents then name theirs.
func (a *Artifacts) Named() bool { return a.union != nil }

// Of reports whether a reads exactly parts, the same indexes by the same
// names: a server reuses it then.
func (a *Artifacts) Of(parts []query.Part) bool { return slices.Equal(a.parts, parts) }

func (a *Artifacts) only() *query.Index { return a.parts[0].Index }

// Search ranks req over the artifacts as one.
func (a *Artifacts) Search(ctx context.Context, req query.Request) (*query.Response, error) {
	if a.union == nil {
		return a.only().Search(ctx, req)
	}
	return a.union.Search(ctx, req)
}

// Mode is req's mode: hybrid by default when any artifact has vectors.
func (a *Artifacts) Mode(req query.Request) string {
	if a.union == nil {
		return a.only().Mode(req)
	}
	return a.union.Mode(req)
}

// Models are the distinct models of the artifacts' vectors.
func (a *Artifacts) Models() []artifact.Embeddings {
	if a.union == nil {
		return a.only().Models()
	}
	return a.union.Models()
}

// Get finds req.Ref: with several, REPO:REF in that repository, else in
// the one repository that has it.
func (a *Artifacts) Get(ctx context.Context, req GetRequest) (*documents.Document, error) {
	if a.union == nil {
		return documents.Get(ctx, a.only(), req.Ref, req.Dir)
	}
	doc, err := documents.Get(ctx, a.joined(), req.Ref, req.Dir)
	if err != nil {
		return nil, err
	}
	for _, p := range a.parts {
		if rest, ok := strings.CutPrefix(doc.Path, p.Name+":"); ok {
			doc.Repo, doc.Path = p.Name, rest
			return doc, nil
		}
	}
	return nil, fmt.Errorf("%s names no repository read", doc.Path)
}

// List lists the documents of every artifact, in req.Sort's order.
func (a *Artifacts) List(_ context.Context, req documents.ListRequest) ([]documents.Listed, error) {
	if a.union == nil {
		return documents.List(a.only(), req)
	}
	var out []documents.Listed
	for _, p := range a.parts {
		got, err := documents.List(p.Index, req)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p.Name, err)
		}
		for i := range got {
			got[i].Repo = p.Name
		}
		out = append(out, got...)
	}
	if err := documents.Sort(out, req.Sort); err != nil {
		return nil, err
	}
	return out, nil
}

// Context assembles the context of req.Repo, which may be left out when
// one repository is read, with the org scopes read with it in force.
func (a *Artifacts) Context(ctx context.Context, req ContextRequest) (*documents.ContextResult, error) {
	p, err := a.repo(req.Repo)
	if err != nil {
		return nil, err
	}
	opts := req.ContextOptions
	if opts.IndexSize > 0 && opts.Uses == nil && req.Usage != nil {
		opts.Uses = req.Usage.Recent(p.Index.Location())
	}
	var orgs []query.Part
	for _, o := range a.parts {
		if o.Org > 0 && o != p {
			orgs = append(orgs, o)
		}
	}
	if len(orgs) == 0 {
		return documents.Context(ctx, p.Index, req.Dir, opts)
	}
	return documents.Context(ctx, newWithOrg(p, orgs), req.Dir, opts)
}

// repo returns the artifact named name; "" names the only one that is
// not an org scope (or the only one).
func (a *Artifacts) repo(name string) (query.Part, error) {
	if name == "" {
		own := slices.DeleteFunc(slices.Clone(a.parts), func(p query.Part) bool { return p.Org > 0 })
		switch {
		case len(a.parts) == 1:
			return a.parts[0], nil
		case len(own) == 1:
			return own[0], nil
		}
		return query.Part{}, fmt.Errorf("%w: the context is one repository's; name one of %s", query.ErrUnknownScope, strings.Join(a.names(), ", "))
	}
	for _, p := range a.parts {
		if strings.EqualFold(p.Name, name) {
			return p, nil
		}
	}
	return query.Part{}, fmt.Errorf("%w: %s names no repository read (none by that name, or none you may read); read: %s", query.ErrUnknownScope, name, strings.Join(a.names(), ", "))
}

func (a *Artifacts) names() []string {
	var out []string
	for _, p := range a.parts {
		out = append(out, p.Name)
	}
	return out
}

// Stats adds up the artifacts' counts and sizes.
func (a *Artifacts) Stats(now time.Time) (*query.Stats, error) {
	if a.union == nil {
		return a.only().Stats(now)
	}
	var total *query.Stats
	var dirs []string
	for _, p := range a.parts {
		st, err := p.Index.Stats(now)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p.Name, err)
		}
		dirs = append(dirs, p.Name+"="+st.Dir)
		if total == nil {
			total = st
			total.ByKind, total.ByScope = maps.Clone(st.ByKind), map[string]int{}
		} else {
			total.Documents += st.Documents
			total.Chunks += st.Chunks
			total.Bytes += st.Bytes
			for k, n := range st.ByKind {
				total.ByKind[k] += n
			}
			total.AgeSeconds = max(total.AgeSeconds, st.AgeSeconds)
		}
		for scope, n := range st.ByScope {
			total.ByScope[p.Name+":"+scope] += n
		}
	}
	total.Dir = strings.Join(dirs, " ")
	return total, nil
}

// joined are several artifacts as one documents.Source, each path as
// REPO:PATH, for Get to resolve a reference over them all.
func (a *Artifacts) joined() *joined {
	a.joinOnce.Do(func() { a.join = &joined{parts: a.parts} })
	return a.join
}

type joined struct {
	parts []query.Part

	docsOnce, headerOnce sync.Once
	docs                 []artifact.Document
	docsErr              error
	header               *artifact.Manifest
}

// Parts tells documents.Get the repositories' names, so that it takes
// REPO:REF.
func (j *joined) Parts() []query.Part { return j.parts }

// Documents lists every artifact's documents, each path as REPO:PATH.
func (j *joined) Documents() ([]artifact.Document, error) {
	j.docsOnce.Do(func() {
		for _, p := range j.parts {
			docs, err := p.Index.Documents()
			if err != nil {
				j.docs, j.docsErr = nil, fmt.Errorf("%s: %w", p.Name, err)
				return
			}
			for _, d := range docs {
				d.Path = p.Name + ":" + d.Path
				j.docs = append(j.docs, d)
			}
		}
	})
	return j.docs, j.docsErr
}

// Text reads a document of Documents from its artifact.
func (j *joined) Text(ctx context.Context, d artifact.Document) (string, string, error) {
	if front, body, ok, err := partText(ctx, j.parts, d); ok {
		return front, body, err
	}
	return "", "", fmt.Errorf("%s names no repository read", d.Path)
}

// partText reads d, whose path is PART:PATH, from the artifact of parts
// it names; ok is false when it names none.
func partText(ctx context.Context, parts []query.Part, d artifact.Document) (front, body string, ok bool, err error) {
	for _, p := range parts {
		if rest, named := strings.CutPrefix(d.Path, p.Name+":"); named {
			d.Path = rest
			front, body, err = p.Index.Text(ctx, d)
			return front, body, true, err
		}
	}
	return "", "", false, nil
}

// Header is the first artifact's, with every artifact's retired
// documents and statuses, by REPO:PATH.
func (j *joined) Header() *artifact.Manifest {
	j.headerOnce.Do(func() {
		h := *j.parts[0].Index.Header()
		h.Retired, h.Statuses, h.Disputed = map[string]string{}, map[string]string{}, nil
		for _, p := range j.parts {
			m := p.Index.Header()
			for path, by := range m.Retired {
				if by != "" {
					by = p.Name + ":" + by
				}
				h.Retired[p.Name+":"+path] = by
			}
			for path, st := range m.Statuses {
				h.Statuses[p.Name+":"+path] = st
			}
			for path, others := range m.Disputed {
				if h.Disputed == nil {
					h.Disputed = map[string][]string{}
				}
				for _, o := range others {
					h.Disputed[p.Name+":"+path] = append(h.Disputed[p.Name+":"+path], p.Name+":"+o)
				}
			}
		}
		j.header = &h
	})
	return j.header
}

// CheckScopes accepts a scope any artifact has.
func (j *joined) CheckScopes(scopes []string) error {
	var first error
	for _, s := range scopes {
		ok := false
		for _, p := range j.parts {
			err := p.Index.CheckScopes([]string{s})
			if err == nil {
				ok = true
				break
			}
			first = cmp.Or(first, err)
		}
		if !ok {
			return first
		}
	}
	return nil
}

// RecordSearch records the documents a search of b handed out, in the
// usage log of the artifact each came from.
func (u *Usage) RecordSearch(b Backend, via, q string, results []query.Result) {
	for _, p := range b.Parts() {
		var mine []query.Result
		for _, r := range results {
			if r.Repo == p.Name {
				mine = append(mine, r)
			}
		}
		if len(mine) > 0 {
			u.Record(p.Index.Location(), SearchEvents(p.Index, via, q, mine))
		}
	}
}

// RecordGet records a document b handed out, in the usage log of the
// artifact it came from (d.Repo's).
func (u *Usage) RecordGet(b Backend, via string, d *documents.Document) {
	for _, p := range b.Parts() {
		if p.Name == d.Repo {
			u.Record(p.Index.Location(), GetEvents(via, d))
			return
		}
	}
}
