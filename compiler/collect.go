package compiler

import (
	"cmp"
	"fmt"
	"iter"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kbqdev/kbq/compiler/checks"
	"github.com/kbqdev/kbq/gitsource"
	"github.com/kbqdev/kbq/knowledge"
)

// Source is what the compiler reads files from. gitsource snapshots satisfy
// it; tests use a map.
type Source interface {
	// Files yields every file of the source; an error ends the sequence.
	Files() iter.Seq2[gitsource.File, error]
	// Read returns a file's bytes, failing with gitsource.ErrTooLarge above max.
	Read(f gitsource.File, max int64) ([]byte, error)
}

// Global is the global scope's knowledge directory.
type Global struct {
	Dir    string // absolute path, named in diagnostics
	Source Source
}

// candidate is a knowledge file found in a source, not yet read: what
// its listing says, and no more (a build of 92,640 files holds them all
// to its end, at its peak of memory).
type candidate struct {
	loc  knowledge.Location
	file gitsource.File // its Blob "" when the source learns it by reading
	// global, for a file of the global scope (read from opts.Global's
	// source), names it; a repository's file is named by its path.
	global *globalName
}

type globalName struct{ path, display string }

// path is the document's path in the artifact.
func (c *candidate) path() string {
	if c.global != nil {
		return c.global.path
	}
	return c.file.Path
}

// display is the path diagnostics name.
func (c *candidate) display() string {
	if c.global != nil {
		return c.global.display
	}
	return c.file.Path
}

// blob is the file's blob as listed, "" when the source learns it by
// reading.
func (c *candidate) blob() string { return c.file.Blob }

// listing is every knowledge file of a build's sources.
type listing struct {
	src, global Source // where the candidates are read from
	docs        []candidate
	attachments map[string]bool // scope + "\x00" + path inside .kb/
	attached    []string        // attachment paths
	// paths is every file of the source, for the references knowledge
	// makes to the repository.
	paths *checks.RepoPaths
	// files maps the repository path of every knowledge file, attachments
	// included, to its blob hash ("" when not known before reading).
	files map[string]string
	diags Diagnostics
}

// collect lists the knowledge files of src and, when set, the global scope,
// leaving out what the configuration ignores.
func collect(src Source, opts *Options) (*listing, error) {
	global, contextFiles := opts.Global, opts.ContextFiles
	l := &listing{src: src, attachments: make(map[string]bool), files: make(map[string]string), paths: checks.NewRepoPaths()}
	if global != nil {
		l.global = global.Source
	}
	for f, err := range src.Files() {
		if err != nil {
			return nil, err
		}
		if l.docs == nil {
			if h, ok := src.(interface{ SizeHint() int }); ok && h.SizeHint() > 0 {
				l.docs = make([]candidate, 0, h.SizeHint())
				l.files = make(map[string]string, h.SizeHint())
			}
		}
		l.paths.Add(f.Path)
		loc, ok := knowledge.Classify(f.Path, contextFiles)
		if ok && opts.Config.Ignored(f.Path) {
			continue
		}
		if !ok {
			switch {
			case !f.Kind.IsFile() && insideKnowledge(f.Path):
				// A link or a submodule in .kb/ (ln -s ../docs .kb/docs)
				// holds what its author meant as knowledge.
				l.skip(f.Path, fmt.Sprintf("%s is a %s; kbc never follows links or enters submodules, so it is skipped: move or copy the files into .kb/ (git mv docs .kb/docs; README: bringing existing docs in)", f.Path, f.Kind))
			case path.Base(f.Path) != knowledge.Dir:
			case !f.Kind.IsFile():
				l.skip(f.Path, fmt.Sprintf("%s is a %s; kbc never follows links or enters submodules, so it is skipped", f.Path, f.Kind))
			default:
				l.skip(f.Path, fmt.Sprintf("%s is a file, not a directory, so it holds no knowledge (make it a directory of markdown files)", f.Path))
			}
			continue
		}
		l.files[f.Path] = f.Blob
		l.add(candidate{loc: loc, file: f})
	}
	if global != nil {
		for f, err := range global.Source.Files() {
			if err != nil {
				return nil, fmt.Errorf("read global knowledge in %s: %w", global.Dir, err)
			}
			loc, ok := knowledge.ClassifyGlobal(f.Path)
			if !ok {
				continue
			}
			display := filepath.Join(global.Dir, filepath.FromSlash(f.Path))
			l.add(candidate{loc: loc, file: f, global: &globalName{knowledge.GlobalPathPrefix + f.Path, display}})
		}
	}
	slices.SortFunc(l.docs, func(a, b candidate) int { return cmp.Compare(a.path(), b.path()) })
	return l, nil
}

// insideKnowledge reports whether p lies in a .kb/ directory.
func insideKnowledge(p string) bool {
	return strings.HasPrefix(p, knowledge.Dir+"/") || strings.Contains(p, "/"+knowledge.Dir+"/")
}

func (l *listing) add(c candidate) {
	f := c.file
	switch {
	case f.Kind == gitsource.Unmerged:
		l.diags = append(l.diags, Diagnostic{Path: c.display(), Line: 1, Col: 1, Severity: Error,
			Message: "unmerged path: resolve the merge conflict and git add the file"})
		return
	case !f.Kind.IsFile():
		l.skip(c.display(), fmt.Sprintf("%s skipped: kbc never follows links or enters submodules (copy the file in instead)", f.Kind))
		return
	}
	if c.loc.Kind == knowledge.KindAttachment {
		l.attachments[c.loc.Scope+"\x00"+c.loc.Topic] = true
		l.attached = append(l.attached, c.path())
		return
	}
	if len(l.docs) == cap(l.docs) {
		// Doubling, not append's gentler growth for large slices: a listing
		// of 100,000 candidates would otherwise copy five times its size.
		l.docs = slices.Grow(l.docs, max(len(l.docs), 64))
	}
	l.docs = append(l.docs, c)
}

func (l *listing) skip(display, msg string) {
	l.diags = append(l.diags, Diagnostic{Path: display, Line: 1, Col: 1, Severity: Warning, Message: msg})
}

// shadowing returns, for every document, the scopes whose document of the
// same topic hides it from queries made inside them: deeper scopes win.
// Context documents accumulate instead of shadowing each other.
func shadowing(docs []candidate) map[string][]string {
	// Most topics live in one scope: a topic is filed under the index of
	// its first document, and scopes are gathered only for the others.
	first := make(map[string]int, len(docs))
	var shared map[string][]string // topic → its scopes, when several
	for i, c := range docs {
		if c.loc.Kind == knowledge.KindContext {
			continue
		}
		j, seen := first[c.loc.Topic]
		if !seen {
			first[c.loc.Topic] = i
			continue
		}
		if shared == nil {
			shared = make(map[string][]string)
		}
		if shared[c.loc.Topic] == nil {
			shared[c.loc.Topic] = []string{docs[j].loc.Scope}
		}
		shared[c.loc.Topic] = append(shared[c.loc.Topic], c.loc.Scope)
	}
	out := make(map[string][]string)
	for _, c := range docs {
		scopes := shared[c.loc.Topic]
		if scopes == nil || c.loc.Kind == knowledge.KindContext {
			continue
		}
		for _, s := range scopes {
			if shadows(s, c.loc.Scope) {
				out[c.path()] = append(out[c.path()], s)
			}
		}
		slices.Sort(out[c.path()])
	}
	return out
}

// shadows reports whether a document in scope deeper hides one of the same
// topic in scope shallower.
func shadows(deeper, shallower string) bool {
	if knowledge.ScopeDepth(deeper) <= knowledge.ScopeDepth(shallower) {
		return false
	}
	dir, ok := knowledge.ScopeDir(deeper)
	return ok && knowledge.ScopeContains(shallower, dir)
}

// KnowledgeFiles lists the files of src that are knowledge, documents and
// attachments, in path order, as opts (resolved for src) choose them.
func KnowledgeFiles(src Source, opts Options) ([]gitsource.File, error) {
	opts.defaults()
	var files []gitsource.File
	for f, err := range src.Files() {
		if err != nil {
			return nil, err
		}
		if _, ok := knowledge.Classify(f.Path, opts.ContextFiles); ok && !opts.Config.Ignored(f.Path) {
			files = append(files, f)
		}
	}
	return files, nil
}

// attachmentPaths lists the attachments in path order.
func (l *listing) attachmentPaths() []string {
	return slices.Sorted(slices.Values(l.attached))
}
