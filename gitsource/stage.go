package gitsource

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing/format/index"
)

// Stage adds the file at path (absolute, or relative to the working
// directory) to git's index, as "git add" does. Removed files are removed
// from the index.
func (r *Repo) Stage(path string) error {
	rel, err := r.relative(path)
	if err != nil {
		return err
	}
	wt, err := r.git.Worktree()
	if err != nil {
		return fmt.Errorf("stage %s: %w", rel, err)
	}
	if _, err := wt.Add(rel); err != nil {
		if errors.Is(err, index.ErrUnknownExtension) {
			return r.gitCLI("add", "--", rel)
		}
		return fmt.Errorf("stage %s: %w", rel, err)
	}
	return nil
}

// Unstage removes path from git's index if it is there; the file itself is
// left alone.
func (r *Repo) Unstage(path string) error {
	rel, err := r.relative(path)
	if err != nil {
		return err
	}
	idx, err := r.git.Storer.Index()
	if errors.Is(err, index.ErrUnknownExtension) {
		return r.gitCLI("rm", "--cached", "--quiet", "--ignore-unmatch", "--", rel)
	}
	if err != nil {
		return fmt.Errorf("read git index: %w", err)
	}
	if _, err := idx.Remove(filepath.ToSlash(rel)); errors.Is(err, index.ErrEntryNotFound) {
		return nil
	} else if err != nil {
		return fmt.Errorf("unstage %s: %w", rel, err)
	}
	if err := r.git.Storer.SetIndex(idx); err != nil {
		return fmt.Errorf("write git index: %w", err)
	}
	return nil
}

// Tracked reports whether path is in git's index.
func (r *Repo) Tracked(path string) (bool, error) {
	rel, err := r.relative(path)
	if err != nil {
		return false, err
	}
	entries, err := r.indexEntries()
	if err != nil {
		return false, err
	}
	rel = filepath.ToSlash(rel)
	for _, e := range entries {
		if e.Path == rel {
			return true, nil
		}
	}
	return false, nil
}

func (r *Repo) relative(path string) (string, error) {
	if r.root == "" {
		return "", ErrNoWorktree
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	root := r.root
	if resolved, err := filepath.EvalSymlinks(root); err == nil {
		root = resolved
	}
	if resolved, err := filepath.EvalSymlinks(filepath.Dir(abs)); err == nil {
		abs = filepath.Join(resolved, filepath.Base(abs))
	}
	rel, err := filepath.Rel(root, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("%s is outside the repository at %s", path, r.root)
	}
	return rel, nil
}

// gitCLI runs git for index formats go-git cannot write (split and sparse
// indexes): the one stated fallback of this package.
func (r *Repo) gitCLI(args ...string) error {
	cmd := exec.Command("git", args...)
	cmd.Dir = r.root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return nil
}

// GitDir returns the repository's git directory (the per-worktree one for
// linked worktrees).
func (r *Repo) GitDir() string {
	if r.gitDir == nil {
		return ""
	}
	return r.gitDir.Root()
}

// HooksDir returns the directory git runs hooks from: core.hooksPath
// (relative paths are relative to the working tree), else hooks/ in the
// common git directory, which linked worktrees share.
func (r *Repo) HooksDir() (string, error) {
	cfg, err := r.git.ConfigScoped(config.SystemScope)
	if err != nil {
		return "", fmt.Errorf("read git config: %w", err)
	}
	if p := cfg.Raw.Section("core").Option("hooksPath"); p != "" {
		if strings.HasPrefix(p, "~/") {
			if home, err := os.UserHomeDir(); err == nil {
				p = filepath.Join(home, p[2:])
			}
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(r.root, p)
		}
		return p, nil
	}
	dir := r.GitDir()
	if b, err := os.ReadFile(filepath.Join(dir, "commondir")); err == nil {
		common := strings.TrimSpace(string(b))
		if !filepath.IsAbs(common) {
			common = filepath.Join(dir, common)
		}
		dir = common
	}
	return filepath.Join(dir, "hooks"), nil
}
