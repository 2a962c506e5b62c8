package gitsource

import (
	"errors"
	"fmt"
	"path"

	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// BlobsAt returns the blob hashes that paths have in the tree of rev;
// paths that rev does not hold as files are left out. It reads only the
// trees on the way to the paths, so it costs little in large repositories.
func (r *Repo) BlobsAt(rev string, paths []string) (map[string]string, error) {
	out := make(map[string]string, len(paths))
	commit, err := r.commit(rev)
	if err != nil {
		return nil, err
	}
	root, err := commit.Tree()
	if err != nil {
		return nil, fmt.Errorf("read tree of %s: %w", commit.Hash, err)
	}
	trees := map[string]*object.Tree{"": root}
	var treeAt func(dir string) (*object.Tree, error)
	treeAt = func(dir string) (*object.Tree, error) {
		if t, ok := trees[dir]; ok {
			return t, nil
		}
		parentDir := path.Dir(dir)
		if parentDir == "." {
			parentDir = ""
		}
		parent, err := treeAt(parentDir)
		if err != nil || parent == nil {
			trees[dir] = nil
			return nil, err
		}
		var t *object.Tree
		for _, e := range parent.Entries {
			if e.Name == path.Base(dir) && e.Mode == filemode.Dir {
				t, err = object.GetTree(r.git.Storer, e.Hash)
				if err != nil {
					return nil, fmt.Errorf("read tree %s of %s: %w", e.Hash, dir, err)
				}
			}
		}
		trees[dir] = t
		return t, nil
	}
	for _, p := range paths {
		dir := path.Dir(p)
		if dir == "." {
			dir = ""
		}
		t, err := treeAt(dir)
		if err != nil {
			return nil, err
		}
		if t == nil {
			continue
		}
		e, err := t.FindEntry(path.Base(p))
		if errors.Is(err, object.ErrEntryNotFound) || errors.Is(err, object.ErrDirectoryNotFound) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("look up %s in %s: %w", p, rev, err)
		}
		if e.Mode.IsFile() {
			out[p] = e.Hash.String()
		}
	}
	return out, nil
}
