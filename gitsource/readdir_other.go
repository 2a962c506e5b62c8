//go:build !linux

package gitsource

import (
	"io/fs"
	"os"
	"path/filepath"
)

// readDir reads the entries of directory dir, sorted by name, and returns
// a function that stats one of them without following links, and one that
// closes the directory.
func readDir(dir string) ([]fs.DirEntry, func(name string) (fileStat, error), func(), error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, nil, err
	}
	stat := func(name string) (fileStat, error) {
		info, err := os.Lstat(filepath.Join(dir, name))
		if err != nil {
			return fileStat{}, err
		}
		return fileStat{size: info.Size(), mod: info.ModTime().UnixNano(), exec: info.Mode()&0o111 != 0}, nil
	}
	return entries, stat, func() {}, nil
}
