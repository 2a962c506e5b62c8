package gitsource

import (
	"cmp"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// Lookup finds path by descending the tree objects along it.
func (s *revSnapshot) Lookup(path string) (File, bool, error) {
	tree := s.tree
	parts := strings.Split(path, "/")
	for i, name := range parts {
		var entry *object.TreeEntry
		for j := range tree.Entries {
			if tree.Entries[j].Name == name {
				entry = &tree.Entries[j]
				break
			}
		}
		if entry == nil {
			return File{}, false, nil
		}
		at := strings.Join(parts[:i+1], "/")
		if i == len(parts)-1 {
			kind, err := kindOfMode(entry.Mode)
			if err != nil || entry.Mode == filemode.Dir {
				return File{}, false, nil
			}
			return File{Path: at, Blob: entry.Hash.String(), Kind: kind}, true, nil
		}
		if entry.Mode != filemode.Dir {
			return File{}, false, nil
		}
		var sub *object.Tree
		err := s.repo.readObject(entry.Hash, "tree", at, func() error {
			return s.repo.locked(func() (err error) {
				sub, err = object.GetTree(s.repo.git.Storer, entry.Hash)
				return err
			})
		})
		if err != nil {
			return File{}, false, err
		}
		tree = sub
	}
	return File{}, false, nil
}

// Lookup finds path among the index entries, which git keeps in path order.
func (s *stagedSnapshot) Lookup(path string) (File, bool, error) {
	i, found := slices.BinarySearchFunc(s.files, path, func(f File, p string) int { return cmp.Compare(f.Path, p) })
	if !found {
		return File{}, false, nil
	}
	return s.files[i], true, nil
}

// Lookup stats path below the snapshot's root, never following a link.
func (s *dirSnapshot) Lookup(path string) (File, bool, error) {
	fi, err := os.Lstat(filepath.Join(s.root, filepath.FromSlash(path)))
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) || err == nil && fi.IsDir() {
		return File{}, false, nil
	}
	if err != nil {
		return File{}, false, err
	}
	f := File{Path: path, Kind: Regular, Size: fi.Size(), Mod: fi.ModTime().UnixNano()}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		f.Kind = Symlink
	case !fi.Mode().IsRegular():
		return File{}, false, nil
	case fi.Mode()&0o111 != 0:
		f.Kind = Executable
	}
	return f, true, nil
}
