package reader

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/kbqdev/kbq/artifact"
	"github.com/kbqdev/kbq/knowledge"
	"github.com/kbqdev/kbq/query"
)

// withOrg is a repository's artifact with the org scopes in force in it,
// as one documents.Source for its context: the org scopes' root documents
// are in scope knowledge.ScopeOrg, between the global scope and the
// project's, each path ORG:PATH. A topic the repository's own scopes
// hold shadows the org's document of that topic (where those scopes are
// in force), and a later org scope's shadows an earlier's.
type withOrg struct {
	repo query.Part
	orgs []query.Part // by Org

	once   sync.Once
	docs   []artifact.Document
	err    error
	header *artifact.Manifest
}

func newWithOrg(repo query.Part, orgs []query.Part) *withOrg {
	orgs = slices.Clone(orgs)
	slices.SortStableFunc(orgs, func(a, b query.Part) int { return cmp.Compare(a.Org, b.Org) })
	return &withOrg{repo: repo, orgs: orgs}
}

func (w *withOrg) load() {
	own, err := w.repo.Index.Documents()
	if err != nil {
		w.err = err
		return
	}
	header := *w.repo.Index.Header()
	header.Retired = map[string]string{}
	for p, by := range w.repo.Index.Header().Retired {
		header.Retired[p] = by
	}
	// Which of the repository's scopes hold each topic.
	holders := map[string][]string{}
	for _, d := range own {
		if _, gone := header.Retired[d.Path]; !gone && d.Topic != "" {
			holders[d.Topic] = append(holders[d.Topic], d.Scope)
		}
	}
	var docs []artifact.Document
	for i, o := range w.orgs {
		odocs, err := o.Index.Documents()
		if err != nil {
			w.err = fmt.Errorf("%s: %w", o.Name, err)
			return
		}
		later := map[string]bool{}
		for _, l := range w.orgs[i+1:] {
			ldocs, err := l.Index.Documents()
			if err != nil {
				w.err = fmt.Errorf("%s: %w", l.Name, err)
				return
			}
			for _, d := range ldocs {
				if d.Scope == knowledge.ScopeProject {
					later[d.Topic] = true
				}
			}
		}
		for _, d := range odocs {
			if d.Scope != knowledge.ScopeProject || later[d.Topic] {
				continue
			}
			if by, gone := o.Index.Header().Retired[d.Path]; gone {
				if by != "" {
					by = o.Name + ":" + by
				}
				header.Retired[o.Name+":"+d.Path] = by
			}
			d.Path, d.Scope = o.Name+":"+d.Path, knowledge.ScopeOrg
			d.ShadowedBy = slices.Clone(holders[d.Topic])
			docs = append(docs, d)
		}
	}
	w.docs, w.header = append(docs, own...), &header
}

// Documents are the org scopes' and the repository's.
func (w *withOrg) Documents() ([]artifact.Document, error) {
	w.once.Do(w.load)
	return w.docs, w.err
}

// Text reads a document from its artifact.
func (w *withOrg) Text(ctx context.Context, d artifact.Document) (string, string, error) {
	if front, body, ok, err := partText(ctx, w.orgs, d); ok {
		return front, body, err
	}
	return w.repo.Index.Text(ctx, d)
}

// Header is the repository's, with the org scopes' retired documents.
func (w *withOrg) Header() *artifact.Manifest {
	w.once.Do(w.load)
	if w.header == nil {
		return w.repo.Index.Header()
	}
	return w.header
}

// CheckScopes accepts the repository's scopes.
func (w *withOrg) CheckScopes(scopes []string) error { return w.repo.Index.CheckScopes(scopes) }
