// Package gitdir finds a git repository's directories and reads its HEAD
// by looking at files, as git does, without go-git: kbq, which must stay
// small, and gitsource, which opens what it finds with go-git, share it,
// so that both sides agree on which repository a directory belongs to.
package gitdir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ErrNotFound means no repository contains the path.
var ErrNotFound = errors.New("not a git repository")

// Dirs are where a repository keeps its files.
type Dirs struct {
	// Worktree is the working tree; "" for a bare repository.
	Worktree string
	// Git is the git directory: .git, the directory a .git file names (a
	// linked worktree or a submodule), or the bare repository itself.
	Git string
	// Common is the directory shared by linked worktrees, holding objects
	// and refs: where Git's commondir file points, else Git.
	Common string
}

// Find returns the repository containing path, looking at path and then
// its parents as git does: a directory that is a bare repository itself,
// else the first holding .git, a directory or a file saying "gitdir: D".
func Find(path string) (Dirs, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return Dirs{}, err
	}
	if IsBare(abs) {
		return withCommon(Dirs{Git: abs}), nil
	}
	for dir := abs; ; {
		dot := filepath.Join(dir, ".git")
		if fi, err := os.Stat(dot); err == nil {
			if fi.IsDir() {
				return withCommon(Dirs{Worktree: dir, Git: dot}), nil
			}
			target, err := readGitFile(dot)
			if err != nil {
				return Dirs{}, err
			}
			return withCommon(Dirs{Worktree: dir, Git: target}), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return Dirs{}, fmt.Errorf("%s: %w", path, ErrNotFound)
		}
		dir = parent
	}
}

// IsBare reports whether dir looks like a bare repository: HEAD, objects/
// and refs/ in it, as git checks.
func IsBare(dir string) bool {
	for _, name := range []string{"HEAD", "objects", "refs"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			return false
		}
	}
	return true
}

// readGitFile reads a .git file, which names the git directory.
func readGitFile(name string) (string, error) {
	b, err := os.ReadFile(name)
	if err != nil {
		return "", err
	}
	target, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:")
	if !ok {
		return "", fmt.Errorf("%s: not a gitdir file", name)
	}
	target = strings.TrimSpace(target)
	if !filepath.IsAbs(target) {
		target = filepath.Join(filepath.Dir(name), target)
	}
	return target, nil
}

func withCommon(d Dirs) Dirs {
	d.Common = d.Git
	if b, err := os.ReadFile(filepath.Join(d.Git, "commondir")); err == nil {
		d.Common = strings.TrimSpace(string(b))
		if !filepath.IsAbs(d.Common) {
			d.Common = filepath.Join(d.Git, d.Common)
		}
	}
	return d
}

// HeadCommit reads the commit HEAD points to, cheaply: HEAD, then the
// loose ref or packed-refs. It returns "" when it cannot tell (an unborn
// branch, a damaged repository).
func (d Dirs) HeadCommit() string {
	head, err := os.ReadFile(filepath.Join(d.Git, "HEAD"))
	if err != nil {
		return ""
	}
	ref, isRef := strings.CutPrefix(strings.TrimSpace(string(head)), "ref: ")
	if !isRef {
		return strings.TrimSpace(string(head))
	}
	for _, dir := range []string{d.Git, d.Common} {
		if b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(ref))); err == nil {
			return strings.TrimSpace(string(b))
		}
	}
	packed, err := os.ReadFile(filepath.Join(d.Common, "packed-refs"))
	if err != nil {
		return ""
	}
	for line := range strings.SplitSeq(string(packed), "\n") {
		if hash, name, ok := strings.Cut(strings.TrimSpace(line), " "); ok && name == ref {
			return hash
		}
	}
	return ""
}
