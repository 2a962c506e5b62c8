package documents

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/kbqdev/kbq/artifact"
	"github.com/kbqdev/kbq/internal/suggest"
	"github.com/kbqdev/kbq/knowledge"
	"github.com/kbqdev/kbq/query"
)

// Document is a whole document of the artifact.
type Document struct {
	// Repo names the repository when several are read together.
	Repo   string   `json:"repo,omitempty"`
	Path   string   `json:"path"`
	Topic  string   `json:"topic"`
	Kind   string   `json:"kind"`
	Scope  string   `json:"scope"`
	Title  string   `json:"title"`
	Tags   []string `json:"tags"`
	Source string   `json:"source,omitempty"`
	ID     int      `json:"id,omitempty"`
	// Blob is the git blob hash of the file compiled: what a writer names
	// to replace the file it read (kbc mcp's knowledge_write).
	Blob string `json:"blob,omitempty"`
	// Content is the document as written, frontmatter included (with line
	// endings normalized to LF and any byte order mark removed).
	Content string `json:"content"`
	// Body is Content without the frontmatter.
	Body string `json:"-"`
	// Status is the document's status: active unless it is a draft,
	// deprecated, or superseded (by itself or by another document).
	Status string `json:"status"`
	// SupersededBy is the path of the document that replaces it, if any.
	SupersededBy string `json:"superseded_by,omitempty"`
	// Disputed names the documents in an unresolved dispute with it
	// (contradicts:).
	Disputed []string `json:"disputed,omitempty"`
	query.Age
}

func ageOf(d artifact.Document) query.Age {
	return query.Age{Updated: d.Updated, Author: d.Author, Commit: d.Commit, Uncommitted: d.Uncommitted}
}

// Get returns the document ref names: a path ("services/api/.kb/deploy.md"),
// a topic key ("deploy/steps"), or "memory:ID". When several scopes hold the
// topic or memory id, the one in force from dir wins, the deepest first.
func Get(ctx context.Context, src Source, ref, dir string) (*Document, error) {
	docs, err := src.Documents()
	if err != nil {
		return nil, err
	}
	var repos []string
	if r, ok := src.(interface{ Parts() []query.Part }); ok {
		for _, p := range r.Parts() {
			if p.Name != "" {
				repos = append(repos, p.Name)
			}
		}
	}
	meta, err := resolve(docs, repos, ref, dir)
	if err != nil {
		return nil, err
	}
	doc, err := load(ctx, src, meta)
	if err != nil {
		return nil, err
	}
	doc.Status = cmp.Or(meta.Status, "active")
	doc.Age = ageOf(meta)
	doc.Disputed = src.Header().Disputed[meta.Path]
	if by, gone := src.Header().Retired[meta.Path]; gone {
		doc.SupersededBy = by
		if by != "" || doc.Status == "active" {
			doc.Status = "superseded"
		}
	}
	return doc, nil
}

// resolve finds the document ref names. Over several repositories read as
// one (repos, whose documents' paths are REPO:PATH), REPO:REF names REF in
// repository REPO: a path, a topic key or memory:ID, as in one
// repository; a REF of no repository is looked for in each, and must be
// in one. This is every door's resolver: kbq get, /get and knowledge_get.
func resolve(docs []artifact.Document, repos []string, ref, dir string) (artifact.Document, error) {
	ref = strings.TrimSpace(ref)
	if len(repos) == 0 {
		return resolveIn(docs, ref, dir, "", true)
	}
	in := func(repo string) []artifact.Document {
		// A repository's documents are together, as the union lists
		// them: the run of them, not a copy, when they are.
		prefix := repo + ":"
		lo := 0
		for lo < len(docs) && !strings.HasPrefix(docs[lo].Path, prefix) {
			lo++
		}
		hi := lo
		for hi < len(docs) && strings.HasPrefix(docs[hi].Path, prefix) {
			hi++
		}
		var out []artifact.Document
		for i := hi; i < len(docs); i++ {
			if strings.HasPrefix(docs[i].Path, prefix) {
				out = append(out, docs[i])
			}
		}
		if out == nil {
			return docs[lo:hi:hi] // resolveIn only reads it
		}
		return append(slices.Clone(docs[lo:hi]), out...)
	}
	for _, repo := range repos {
		if rest, ok := strings.CutPrefix(ref, repo+":"); ok {
			d, err := resolveIn(in(repo), rest, dir, repo+":", true)
			if err != nil {
				return d, fmt.Errorf("%s: %w", repo, err)
			}
			return d, nil
		}
	}
	// A repository without it says so without looking for a name near
	// it, which costs a comparison with every document's: only the last
	// one's error is told, when none has it.
	var found []artifact.Document
	lastMissed := ""
	for _, repo := range repos {
		d, err := resolveIn(in(repo), ref, dir, repo+":", false)
		if err != nil {
			lastMissed = repo
			continue
		}
		found = append(found, d)
	}
	switch len(found) {
	case 0:
		_, err := resolveIn(in(lastMissed), ref, dir, lastMissed+":", true)
		return artifact.Document{}, err
	case 1:
		return found[0], nil
	}
	paths := make([]string, len(found))
	for i, d := range found {
		paths[i] = d.Path
	}
	return artifact.Document{}, fmt.Errorf("%w: %s is in several repositories; name one: %s", ErrNotFound, ref, strings.Join(paths, ", "))
}

// resolveIn resolves ref among docs, whose paths all start with prefix;
// with near, a ref that names no document is told the name nearest it.
func resolveIn(docs []artifact.Document, ref, dir, prefix string, near bool) (artifact.Document, error) {
	var candidates []artifact.Document
	idText, memory := strings.CutPrefix(ref, "memory:")
	if memory {
		id, err := strconv.Atoi(idText)
		if err != nil || id < 1 {
			return artifact.Document{}, fmt.Errorf("%w: %q is not memory:ID with a number ID", ErrNotFound, ref)
		}
		for i := range docs { // by index: a document is 400 bytes to copy
			if d := &docs[i]; d.Kind == knowledge.KindMemory && d.ID == id {
				candidates = append(candidates, *d)
			}
		}
	} else {
		p := strings.TrimPrefix(ref, "./")
		for i := range docs {
			if d := &docs[i]; d.Path == prefix+p || d.Path == p {
				return *d, nil
			}
		}
		topic := strings.TrimSuffix(strings.Trim(p, "/"), ".md")
		for i := range docs {
			if d := &docs[i]; d.Topic == topic {
				candidates = append(candidates, *d)
			}
		}
	}
	switch {
	case len(candidates) == 0:
		if near && !memory {
			names := make([]string, 0, 2*len(docs))
			for i := range docs {
				names = append(names, docs[i].Topic, docs[i].Path)
			}
			if closest := suggest.Closest(strings.TrimPrefix(ref, "./"), names); closest != "" {
				return artifact.Document{}, fmt.Errorf("%w: no document is %q; did you mean %s? (kbq list shows them)", ErrNotFound, ref, closest)
			}
		}
		return artifact.Document{}, fmt.Errorf("%w: no document is %q (kbq list shows them)", ErrNotFound, ref)
	case len(candidates) == 1 && !memory:
		return candidates[0], nil
	}
	if memory {
		return resolveMemory(docs, candidates, ref, dir)
	}
	// The deepest scope in force from dir shadows the others; two of the
	// same depth (deploy.md and deploy.txt, or two repositories read as
	// one) are for the caller to choose between.
	var best []artifact.Document
	for _, d := range candidates {
		if !knowledge.ScopeContains(d.Scope, dir) {
			continue
		}
		switch depth := knowledge.ScopeDepth(d.Scope); {
		case len(best) == 0 || depth > knowledge.ScopeDepth(best[0].Scope):
			best = []artifact.Document{d}
		case depth == knowledge.ScopeDepth(best[0].Scope):
			best = append(best, d)
		}
	}
	if len(best) == 1 {
		return best[0], nil
	}
	if len(best) > 1 {
		candidates = best
	}
	var paths []string
	for _, d := range candidates {
		paths = append(paths, d.Path)
	}
	return artifact.Document{}, fmt.Errorf("%w: %q is ambiguous from here; give a path: %s", ErrNotFound, ref, strings.Join(paths, ", "))
}

// resolveMemory picks the memory of the scope of dir, the deepest scope
// containing it, among candidates. A memory that only an enclosing scope
// has is refused with its path, as kbc forget refuses it: ids are per
// scope, and memory:1 in one scope is not memory:1 in another.
func resolveMemory(docs, candidates []artifact.Document, ref, dir string) (artifact.Document, error) {
	here := ""
	for i := range docs {
		if d := &docs[i]; d.Scope != knowledge.ScopeGlobal && knowledge.ScopeContains(d.Scope, dir) && (here == "" || knowledge.ScopeDepth(d.Scope) > knowledge.ScopeDepth(here)) {
			here = d.Scope
		}
	}
	if here == "" && len(candidates) == 1 {
		return candidates[0], nil
	}
	var enclosing []string
	for _, d := range candidates {
		if d.Scope == here {
			return d, nil
		}
		if knowledge.ScopeContains(d.Scope, dir) {
			enclosing = append(enclosing, d.Path)
		}
	}
	if len(enclosing) > 0 {
		return artifact.Document{}, fmt.Errorf("%w: scope %s has no %s; the enclosing scope's %s has it: get it by that path", ErrNotFound, here, ref, strings.Join(enclosing, ", "))
	}
	return artifact.Document{}, fmt.Errorf("%w: scope %s has no %s (kbq list --kind memory shows the memories)", ErrNotFound, here, ref)
}

// load reads a whole document from src.
func load(ctx context.Context, src Source, meta artifact.Document) (*Document, error) {
	front, body, err := src.Text(ctx, meta)
	if err != nil {
		return nil, err
	}
	tags := meta.Tags
	if tags == nil {
		tags = []string{}
	}
	return &Document{
		Path: meta.Path, Topic: meta.Topic, Kind: meta.Kind, Scope: meta.Scope, Title: meta.Title,
		Tags: tags, Source: meta.Source, ID: meta.ID, Blob: meta.Blob,
		Content: front + body, Body: body,
	}, nil
}

// ListRequest filters a listing.
type ListRequest struct {
	Kinds, Tags, Scopes []string
	// Sort is "path" (the default: by scope, then path) or "updated":
	// the most recently changed first, uncommitted files leading.
	Sort string
}

// Listed is one document of a listing.
type Listed struct {
	// Repo names the repository when several are read together.
	Repo   string   `json:"repo,omitempty"`
	Path   string   `json:"path"`
	Topic  string   `json:"topic"`
	Kind   string   `json:"kind"`
	Scope  string   `json:"scope"`
	Title  string   `json:"title"`
	Tags   []string `json:"tags"`
	Source string   `json:"source"`
	ID     int      `json:"id,omitempty"`
	// Status is the document's own status when it is not active, and
	// Supersedes what it replaces.
	Status     string   `json:"status,omitempty"`
	Supersedes []string `json:"supersedes,omitempty"`
	// Meta holds the document's Meta keys (owner), when it sets any.
	Meta map[string]string `json:"meta,omitempty"`
	query.Age
}

// List returns the documents that pass req's filters, global scope first,
// then the project's, then directory scopes, each in path order.
func List(src Source, req ListRequest) ([]Listed, error) {
	docs, err := src.Documents()
	if err != nil {
		return nil, err
	}
	if err := src.CheckScopes(req.Scopes); err != nil {
		return nil, err
	}
	out := []Listed{}
	for _, d := range docs {
		if len(req.Kinds) > 0 && !slices.Contains(req.Kinds, d.Kind) {
			continue
		}
		if len(req.Tags) > 0 && !hasAnyTag(d.Tags, req.Tags) {
			continue
		}
		if len(req.Scopes) > 0 && !inAnyScope(d.Scope, req.Scopes) {
			continue
		}
		tags := d.Tags
		if tags == nil {
			tags = []string{}
		}
		out = append(out, Listed{Path: d.Path, Topic: d.Topic, Kind: d.Kind, Scope: d.Scope, Title: d.Title, Tags: tags, Source: d.Source, ID: d.ID, Status: d.Status, Supersedes: d.Supersedes, Meta: d.Meta, Age: ageOf(d)})
	}
	if err := Sort(out, req.Sort); err != nil {
		return nil, err
	}
	return out, nil
}

// Sort orders a listing by "path" (or ""): the scopes from the widest in
// (global, the project, then directories in path order, a directory's
// subdirectories after it), paths within a scope, then repositories; or
// by "updated", the most recently changed first.
func Sort(out []Listed, by string) error {
	slices.SortStableFunc(out, func(a, b Listed) int {
		return cmp.Or(cmp.Compare(scopeRank(a.Scope), scopeRank(b.Scope)), cmp.Compare(a.Scope, b.Scope), cmp.Compare(a.Path, b.Path), cmp.Compare(a.Repo, b.Repo))
	})
	switch by {
	case "", "path":
	case "updated":
		// RFC 3339 times in UTC compare as strings; the uncommitted are
		// newer than any commit, and documents of no known age come last.
		rank := func(l Listed) string {
			switch {
			case l.Uncommitted:
				return "~"
			case l.Updated == "":
				return ""
			}
			return l.Updated
		}
		slices.SortStableFunc(out, func(a, b Listed) int { return cmp.Compare(rank(b), rank(a)) })
	default:
		return fmt.Errorf("unknown sort %q (want path or updated)", by)
	}
	return nil
}

// scopeRank orders the global scope first, then the project, then
// directory scopes.
func scopeRank(scope string) int {
	switch scope {
	case knowledge.ScopeGlobal:
		return 0
	case knowledge.ScopeProject:
		return 1
	}
	return 2
}

func hasAnyTag(tags, want []string) bool {
	for _, t := range tags {
		for _, w := range want {
			if strings.EqualFold(t, w) {
				return true
			}
		}
	}
	return false
}

// inAnyScope reports whether scope is one of scopes or below one of them.
func inAnyScope(scope string, scopes []string) bool {
	for _, s := range scopes {
		s = strings.TrimSuffix(s, "/")
		if s == "." || s == "" {
			s = knowledge.ScopeProject
		}
		if scope == s {
			return true
		}
		if dir, ok := knowledge.ScopeDir(s); ok && dir != "" && strings.HasPrefix(scope, s+"/") {
			return true
		}
	}
	return false
}
