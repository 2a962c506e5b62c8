package compiler

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kbqdev/kbq/artifact"
	"github.com/kbqdev/kbq/gitsource"
	"github.com/kbqdev/kbq/knowledge"
)

// dirLister is a snapshot of files on disk that knows the directories it
// listed.
type dirLister interface {
	Root() string
	Dirs() []gitsource.DirStamp
	DigestDirs(func(rel string, entries []fs.DirEntry) uint64)
}

// digestKnowledge has a snapshot of files on disk sum up each directory's
// knowledge entries as it lists them, for the worktree record: what kbq
// compares with a later listing (artifact.Worktree.KnowledgeEntries).
func digestKnowledge(src Source, contextFiles []string) {
	if lister, ok := src.(dirLister); ok {
		w := &artifact.Worktree{ContextFiles: contextFiles}
		lister.DigestDirs(func(rel string, entries []fs.DirEntry) uint64 {
			return artifact.HashEntries(w.KnowledgeOf(rel, entries))
		})
	}
}

// recordWorktree writes, beside the manifest about to be published, what a
// build from the working tree saw of each knowledge file and of the
// directories that hold knowledge, so that kbq can say when the artifact
// is behind the files; it removes an old record after any other build. It
// runs before the manifest is replaced: a record naming another index than
// the manifest's is ignored, so a build that dies in between leaves
// nothing misleading.
func recordWorktree(out string, src Source, l *listing, m *artifact.Manifest, opts *Options) error {
	name := filepath.Join(out, artifact.WorktreeFile)
	lister, ok := src.(dirLister)
	if !ok || m.Source.Mode != "worktree" {
		if err := os.Remove(name); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("%w: %w", ErrOutput, err)
		}
		return nil
	}
	w := &artifact.Worktree{Index: m.Index, ContextFiles: opts.ContextFiles, Files: make([]artifact.FileStamp, 0, len(l.docs)+1)}
	holders := map[string]bool{"": true} // directories that hold a scope or a context file
	j := 0                               // the listing and the documents are both in path order
	for _, c := range l.docs {
		if strings.HasPrefix(c.path(), knowledge.GlobalPathPrefix) || c.file.Mod == 0 {
			continue
		}
		for j < len(m.Documents) && m.Documents[j].Path < c.path() {
			j++
		}
		blob := "" // a file left out of the build
		if j < len(m.Documents) && m.Documents[j].Path == c.path() {
			blob = m.Documents[j].Blob
		}
		w.Files = append(w.Files, artifact.FileStamp{Path: c.path(), Size: c.file.Size, Mod: c.file.Mod, Blob: blob})
		if dir, _, found := knowledge.CutKB(c.path()); found {
			holders[dir] = true
		} else {
			holders[dirOf(c.path())] = true
		}
	}
	if config := opts.Config.stamp; config.Mod != 0 {
		// The configuration changes what the files build: it is watched too,
		// in its place in path order.
		i, _ := slices.BinarySearchFunc(w.Files, config.Path, func(f artifact.FileStamp, p string) int { return strings.Compare(f.Path, p) })
		w.Files = slices.Insert(w.Files, i, config)
	}
	for _, d := range lister.Dirs() {
		if holders[d.Path] || slices.Contains(strings.Split(d.Path, "/"), knowledge.Dir) {
			// The entries are those the walk listed, and so read: a file
			// added after the walk makes a later listing differ.
			w.Dirs = append(w.Dirs, artifact.DirStamp{Path: d.Path, Mod: d.Mod, Entries: d.Digest})
		}
	}
	if err := replaceFile(name, func(wr io.Writer) error { return artifact.EncodeWorktree(wr, w) }); err != nil {
		return fmt.Errorf("%w: %w", ErrOutput, err)
	}
	return nil
}

// dirOf is the directory of a slash-separated path, "" at the root.
func dirOf(p string) string {
	d := path.Dir(p)
	if d == "." {
		return ""
	}
	return d
}
