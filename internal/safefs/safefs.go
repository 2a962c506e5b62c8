// Package safefs opens, creates and checks paths without following
// symbolic links. A repository is outside input: a link it commits where
// kbc writes (the artifact directory, a lock, a temporary file) must never
// make kbc write, or delete, anything outside it.
package safefs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ErrLink means a path kbc would write through is a symbolic link.
var ErrLink = errors.New("is a symbolic link")

// LinkError names the link found where a real directory or file must be.
type LinkError struct {
	Path   string // the link
	Target string // what it points to, when it could be read
}

func (e *LinkError) Error() string {
	if e.Target != "" {
		return fmt.Sprintf("%s is a symbolic link (to %s)", e.Path, e.Target)
	}
	return fmt.Sprintf("%s is a symbolic link", e.Path)
}

func (e *LinkError) Unwrap() error { return ErrLink }

// linkError describes the link at path.
func linkError(path string) error {
	target, _ := os.Readlink(path)
	return &LinkError{Path: path, Target: target}
}

// NotLink returns a *LinkError when path is a symbolic link, and nil when
// it is anything else or does not exist.
func NotLink(path string) error {
	fi, err := os.Lstat(path)
	if err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return linkError(path)
	}
	return nil
}

// NoLinksBelow returns a *LinkError when path, or any directory between
// root and it, is a symbolic link; root itself, and what lies above it, are
// the user's and are not checked. A path outside root is checked on its
// own. Components that do not exist yet end the check: they will be made
// as real directories.
func NoLinksBelow(root, path string) error {
	rel, err := filepath.Rel(root, path)
	if root == "" || err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return NotLink(path)
	}
	cur := root
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		if part == "." || part == "" {
			continue
		}
		cur = filepath.Join(cur, part)
		fi, err := os.Lstat(cur)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return linkError(cur)
		}
	}
	return nil
}

// OpenFile is os.OpenFile that does not follow a symbolic link at name
// (it fails instead, with a *LinkError). Directories above name are
// followed: check them with NoLinksBelow.
func OpenFile(name string, flag int, perm fs.FileMode) (*os.File, error) {
	f, err := os.OpenFile(name, flag|noFollow, perm)
	if err != nil {
		if lerr := NotLink(name); lerr != nil {
			return nil, lerr
		}
		return nil, err
	}
	if noFollow == 0 { // no O_NOFOLLOW here: look after opening
		if lerr := NotLink(name); lerr != nil {
			f.Close()
			return nil, lerr
		}
	}
	return f, nil
}

// Create makes name anew for writing: whatever has the name (a file, a
// link, a directory, left by a process that died) is removed first, links
// never followed, and the file is then created exclusively.
func Create(name string, perm fs.FileMode) (*os.File, error) {
	if err := os.RemoveAll(name); err != nil {
		return nil, err
	}
	return OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
}

// WriteFile writes data to name as Create makes it.
func WriteFile(name string, data []byte, perm fs.FileMode) error {
	f, err := Create(name, perm)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Replace puts data at name whole, with perm: written to a temporary file
// beside it, then renamed over it, so that a reader sees the old content
// or the new, never half of it, and a link at name is replaced, never
// written through.
func Replace(name string, data []byte, perm fs.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(name), "."+filepath.Base(name)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Chmod(perm)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return os.Rename(tmp.Name(), name)
}
