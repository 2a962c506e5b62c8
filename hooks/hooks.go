// Package hooks installs kbq's git pre-commit hook, which runs
// "kbc check --staged" on every commit.
package hooks

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Script is the pre-commit hook. __KBC_FALLBACK__ is replaced by the path
// of the kbc that installs it, used when kbc is not on PATH.
//
//go:embed pre-commit
var Script string

// marker identifies a hook kbq installed.
const marker = "# kbq pre-commit hook"

const chained = "pre-commit.kbq-chained"

// ErrConflict means an existing hook cannot be kept.
var ErrConflict = errors.New("cannot install the hook")

// Result says what Install or Uninstall did.
type Result struct {
	Path    string // the hook file
	Chained string // the earlier hook kept and run first, if any
	Changed bool   // false when there was nothing to do
}

// Install writes the pre-commit hook into dir, the hooks directory git
// uses. An existing hook of another origin is renamed to
// pre-commit.kbq-chained and runs first. Installing twice changes nothing.
func Install(dir, kbcPath string) (Result, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Result{}, fmt.Errorf("create hooks directory: %w", err)
	}
	path := filepath.Join(dir, "pre-commit")
	res := Result{Path: path}
	want := []byte(strings.ReplaceAll(Script, "__KBC_FALLBACK__", shellQuote(kbcPath)))
	old, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return res, fmt.Errorf("read %s: %w", path, err)
	case bytes.Contains(old, []byte(marker)):
		if bytes.Equal(old, want) {
			res.Chained = existing(filepath.Join(dir, chained))
			return res, nil
		}
	default:
		if existing(filepath.Join(dir, chained)) != "" {
			return res, fmt.Errorf("%w: %s exists and so does %s; merge them by hand", ErrConflict, path, chained)
		}
		if err := os.Rename(path, filepath.Join(dir, chained)); err != nil {
			return res, fmt.Errorf("keep the existing hook: %w", err)
		}
	}
	tmp := path + ".kbq-tmp"
	if err := os.WriteFile(tmp, want, 0o755); err != nil {
		return res, fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return res, fmt.Errorf("write %s: %w", path, err)
	}
	res.Changed = true
	res.Chained = existing(filepath.Join(dir, chained))
	return res, nil
}

// Uninstall removes kbq's hook from dir and puts back the hook it chained.
func Uninstall(dir string) (Result, error) {
	path := filepath.Join(dir, "pre-commit")
	res := Result{Path: path}
	old, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) || (err == nil && !bytes.Contains(old, []byte(marker))) {
		return res, nil
	}
	if err != nil {
		return res, fmt.Errorf("read %s: %w", path, err)
	}
	if err := os.Remove(path); err != nil {
		return res, err
	}
	if c := existing(filepath.Join(dir, chained)); c != "" {
		if err := os.Rename(c, path); err != nil {
			return res, fmt.Errorf("restore %s: %w", c, err)
		}
		res.Chained = path
	}
	res.Changed = true
	return res, nil
}

func existing(path string) string {
	if _, err := os.Lstat(path); err == nil {
		return path
	}
	return ""
}

func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
