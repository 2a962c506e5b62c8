package gitsource

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
)

// LeftOut says why the working-tree source never reads the directory rel
// (slash-separated, relative to the root), or "" when it does: rel is
// inside .git, inside a nested repository, or ignored by git's rules
// (.gitignore files on the way down, .git/info/exclude, core.excludesFile).
// Knowledge written there would never be built.
func (r *Repo) LeftOut(rel string) (string, error) {
	rel = strings.Trim(filepath.ToSlash(rel), "/")
	if rel == "" || rel == "." {
		return "", nil
	}
	patterns, err := r.excludePatterns()
	if err != nil {
		return "", err
	}
	parts := strings.Split(rel, "/")
	for i, name := range parts {
		if name == ".git" {
			return "it is inside .git", nil
		}
		domain := parts[:i]
		dir := filepath.Join(r.root, filepath.FromSlash(strings.Join(domain, "/")))
		if fi, err := os.Stat(dir); err == nil && fi.IsDir() { // else made by the write, with no rules in it
			more, err := readIgnoreFile(filepath.Join(dir, ".gitignore"), domain)
			if err != nil {
				return "", err
			}
			patterns = append(patterns, more...)
		}
		if gitignore.NewMatcher(patterns).Match(parts[:i+1], true) {
			return "git ignores " + strings.Join(parts[:i+1], "/"), nil
		}
		if _, err := os.Lstat(filepath.Join(r.root, filepath.FromSlash(strings.Join(parts[:i+1], "/")), ".git")); err == nil {
			return strings.Join(parts[:i+1], "/") + " is another git repository", nil
		}
	}
	return "", nil
}
