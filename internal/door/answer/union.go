package answer

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

// UnionBackend is several artifacts served as one Backend (kbq serve and
// kbq mcp with several): searches rank them as one (query.Union), and a
// document of repository R is R:PATH, which get, list and context take.
type UnionBackend struct {
	union *query.Union
	parts []query.Part

	// The documents and the header of every part, made once.
	docsOnce, headerOnce sync.Once
	docs                 []artifact.Document
	docsErr              error
	header               *artifact.Manifest
}

// NewUnionBackend serves parts as one.
func NewUnionBackend(parts []query.Part) (*UnionBackend, error) {
	u, err := query.NewUnion(parts)
	if err != nil {
		return nil, err
	}
	return &UnionBackend{union: u, parts: parts}, nil
}

var _ Backend = (*UnionBackend)(nil)

// Search ranks req over every artifact as one.
func (b *UnionBackend) Search(ctx context.Context, req query.Request) (*query.Response, error) {
	return b.union.Search(ctx, req)
}

// Parts are the artifacts served, by name.
func (b *UnionBackend) Parts() []query.Part { return b.parts }

// Mode is the union's mode for req: hybrid by default when any artifact
// has vectors.
func (b *UnionBackend) Mode(req query.Request) string { return b.union.Mode(req) }

// Models are the distinct models of the artifacts' vectors.
func (b *UnionBackend) Models() []artifact.Embeddings { return b.union.Models() }

// Blobs asks each result's own artifact.
func (b *UnionBackend) Blobs(results []query.Result) []string {
	out := make([]string, len(results))
	for i, r := range results {
		if ix := b.index(r.Repo); ix != nil {
			out[i] = ix.Blobs([]query.Result{r})[0]
		}
	}
	return out
}

// Location is "": use is recorded in each artifact's own log
// (Usage.RecordSearch and RecordGet).
func (b *UnionBackend) Location() string { return "" }

// Of reports whether b serves exactly parts, the same indexes by the
// same names: a server reuses it then.
func (b *UnionBackend) Of(parts []query.Part) bool {
	return slices.Equal(b.parts, parts)
}

// Documents lists every artifact's documents, each path as REPO:PATH.
func (b *UnionBackend) Documents() ([]artifact.Document, error) {
	b.docsOnce.Do(func() {
		for _, p := range b.parts {
			docs, err := p.Index.Documents()
			if err != nil {
				b.docs, b.docsErr = nil, fmt.Errorf("%s: %w", p.Name, err)
				return
			}
			for _, d := range docs {
				d.Path = p.Name + ":" + d.Path
				b.docs = append(b.docs, d)
			}
		}
	})
	return b.docs, b.docsErr
}

// Text reads a document of Documents from its artifact.
func (b *UnionBackend) Text(ctx context.Context, d artifact.Document) (string, string, error) {
	for _, p := range b.parts {
		if rest, ok := strings.CutPrefix(d.Path, p.Name+":"); ok {
			d.Path = rest
			return p.Index.Text(ctx, d)
		}
	}
	return "", "", fmt.Errorf("%s names no repository served", d.Path)
}

// Header is the first artifact's, with every artifact's retired
// documents and statuses, by REPO:PATH.
func (b *UnionBackend) Header() *artifact.Manifest {
	b.headerOnce.Do(func() { b.header = b.mergeHeaders() })
	return b.header
}

func (b *UnionBackend) mergeHeaders() *artifact.Manifest {
	h := *b.parts[0].Index.Header()
	h.Retired, h.Statuses = map[string]string{}, map[string]string{}
	for _, p := range b.parts {
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
	}
	return &h
}

// CheckScopes accepts a scope any artifact has.
func (b *UnionBackend) CheckScopes(scopes []string) error {
	var first error
	for _, s := range scopes {
		ok := false
		for _, p := range b.parts {
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

// Stats adds up the artifacts' counts and sizes.
func (b *UnionBackend) Stats(now time.Time) (*query.Stats, error) {
	var total *query.Stats
	var dirs []string
	for _, p := range b.parts {
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

func (b *UnionBackend) index(name string) *query.Index {
	for _, p := range b.parts {
		if p.Name == name {
			return p.Index
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
// artifact it came from.
func (u *Usage) RecordGet(b Backend, via string, d *documents.Document) {
	for _, p := range b.Parts() {
		path, ok := d.Path, p.Name == ""
		if !ok {
			path, ok = strings.CutPrefix(d.Path, p.Name+":")
		}
		if ok {
			e := GetEvents(via, d)
			e[0].Path = path
			u.Record(p.Index.Location(), e)
			return
		}
	}
}
