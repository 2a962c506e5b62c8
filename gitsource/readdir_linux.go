package gitsource

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// readDir reads the entries of directory dir, sorted by name, and returns
// a function that stats one of them without following links, relative to
// the open directory, and one that closes it. Resolving each file's whole
// path again (os.DirEntry.Info) cost a fifth of a listing: a walk of 4
// copies of PowerShell-Docs took 65 ms that way and 51 ms with fstatat.
func readDir(dir string) ([]fs.DirEntry, func(name string) (fileStat, error), func(), error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, nil, nil, err
	}
	entries, err := f.ReadDir(-1)
	if err != nil {
		f.Close()
		return nil, nil, nil, err
	}
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	fd := int(f.Fd())
	stat := func(name string) (fileStat, error) {
		var st unix.Stat_t
		if err := unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			return fileStat{}, &fs.PathError{Op: "lstat", Path: filepath.Join(dir, name), Err: err}
		}
		return fileStat{size: st.Size, mod: st.Mtim.Nano(), exec: st.Mode&0o111 != 0}, nil
	}
	return entries, stat, func() { f.Close() }, nil
}
