package gitsource

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"iter"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
	"github.com/go-git/go-git/v5/plumbing/format/index"
)

// Worktree returns the working tree as it is on disk, leaving out what git
// ignores: .gitignore files, .git/info/exclude and core.excludesFile.
func (r *Repo) Worktree() (Snapshot, error) {
	if r.root == "" {
		return nil, fmt.Errorf("read working tree: %w", ErrNoWorktree)
	}
	base, err := r.excludePatterns()
	if err != nil {
		return nil, err
	}
	head, err := r.Head()
	if err != nil {
		return nil, err
	}
	s := &dirSnapshot{root: r.root, base: base, gitignore: true, info: Info{Mode: "worktree"}}
	if !head.IsZero() {
		s.info.Commit = head.String()
	}
	s.cache = r.statCache()
	return s, nil
}

// Dir returns the files below root, a plain directory outside git. Hidden
// files and directories (names starting with a dot) are left out.
func Dir(root string) Snapshot {
	return &dirSnapshot{root: root, skipHidden: true, info: Info{Mode: "dir"}}
}

type dirSnapshot struct {
	root       string
	base       []gitignore.Pattern
	gitignore  bool // read .gitignore files on the way down
	skipHidden bool
	cache      *statCache
	info       Info
	dirs       []DirStamp
}

// Dirs returns the directories the last iteration of Files listed, with
// their modification times from before they were read.
func (s *dirSnapshot) Dirs() []DirStamp { return s.dirs }

// Root returns the directory the snapshot lists.
func (s *dirSnapshot) Root() string { return s.root }

func (s *dirSnapshot) Info() Info { return s.info }

func (s *dirSnapshot) Files() iter.Seq2[File, error] {
	return func(yield func(File, error) bool) {
		s.dirs = s.dirs[:0]
		s.walk("", s.base, yield)
	}
}

// walk yields the entries of the directory rel (slash-separated, "" for the
// root). It returns false when yield asked to stop or an error ended it.
func (s *dirSnapshot) walk(rel string, patterns []gitignore.Pattern, yield func(File, error) bool) bool {
	dir := filepath.Join(s.root, filepath.FromSlash(rel))
	var domain []string
	if rel != "" {
		domain = strings.Split(rel, "/")
	}
	if s.gitignore {
		ps, err := readIgnoreFile(filepath.Join(dir, ".gitignore"), domain)
		if err != nil {
			yield(File{}, err)
			return false
		}
		patterns = append(patterns[:len(patterns):len(patterns)], ps...)
	}
	matcher := gitignore.NewMatcher(patterns)
	if fi, err := os.Stat(dir); err == nil {
		s.dirs = append(s.dirs, DirStamp{Path: rel, Mod: fi.ModTime().UnixNano()})
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		yield(File{}, fmt.Errorf("read directory %s: %w", dir, err))
		return false
	}
	for _, e := range entries {
		name := e.Name()
		if name == ".git" || (s.skipHidden && strings.HasPrefix(name, ".")) {
			continue
		}
		p := path.Join(rel, name)
		parts := append(domain[:len(domain):len(domain)], name)
		isDir := e.IsDir()
		if s.gitignore && matcher.Match(parts, isDir) {
			continue
		}
		switch t := e.Type(); {
		case isDir:
			if _, err := os.Lstat(filepath.Join(dir, name, ".git")); err == nil {
				if !yield(File{Path: p, Kind: Submodule}, nil) {
					return false
				}
				continue
			}
			if !s.walk(p, patterns, yield) {
				return false
			}
		case t&fs.ModeSymlink != 0:
			if !yield(File{Path: p, Kind: Symlink}, nil) {
				return false
			}
		case t.IsRegular():
			f := File{Path: p, Kind: Regular}
			info, err := e.Info()
			if err != nil {
				yield(File{}, fmt.Errorf("stat %s: %w", p, err))
				return false
			}
			if info.Mode()&0o111 != 0 {
				f.Kind = Executable
			}
			f.Blob = s.cache.lookup(p, info)
			f.Size, f.Mod = info.Size(), info.ModTime().UnixNano()
			if !yield(f, nil) {
				return false
			}
		}
	}
	return true
}

func (s *dirSnapshot) Read(f File, max int64) ([]byte, error) {
	name := filepath.Join(s.root, filepath.FromSlash(f.Path))
	file, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", f.Path, err)
	}
	defer file.Close()
	info, err := file.Stat()
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", f.Path, err)
	}
	if info.Size() > max {
		return nil, tooLarge(f.Path, info.Size(), max)
	}
	data, err := io.ReadAll(io.LimitReader(file, max+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", f.Path, err)
	}
	if int64(len(data)) > max {
		return nil, tooLarge(f.Path, int64(len(data)), max)
	}
	return data, nil
}

// readIgnoreFile parses a gitignore-format file; a missing file has no
// patterns.
func readIgnoreFile(name string, domain []string) ([]gitignore.Pattern, error) {
	data, err := os.ReadFile(name)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		if fi, serr := os.Stat(name); serr == nil && fi.IsDir() {
			return nil, nil
		}
		return nil, fmt.Errorf("read ignore rules: %w", err)
	}
	return parseIgnore(data, domain), nil
}

// parseIgnore parses gitignore rules that apply below domain.
func parseIgnore(data []byte, domain []string) []gitignore.Pattern {
	var ps []gitignore.Pattern
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSuffix(line, "\r")
		if strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "" {
			continue
		}
		ps = append(ps, gitignore.ParsePattern(line, domain))
	}
	return ps
}

// excludePatterns returns the ignore rules that apply before any .gitignore:
// core.excludesFile (or its default, $XDG_CONFIG_HOME/git/ignore), then
// info/exclude of the repository.
func (r *Repo) excludePatterns() ([]gitignore.Pattern, error) {
	var ps []gitignore.Pattern
	excludes := ""
	if cfg, err := r.git.ConfigScoped(config.SystemScope); err == nil && cfg.Raw != nil {
		excludes = cfg.Raw.Section("core").Option("excludesfile")
	}
	if excludes == "" {
		if xdg := os.Getenv("XDG_CONFIG_HOME"); xdg != "" {
			excludes = filepath.Join(xdg, "git", "ignore")
		} else if home, err := os.UserHomeDir(); err == nil {
			excludes = filepath.Join(home, ".config", "git", "ignore")
		}
	}
	if strings.HasPrefix(excludes, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			excludes = filepath.Join(home, excludes[2:])
		}
	}
	if excludes != "" {
		global, err := readIgnoreFile(excludes, nil)
		if err != nil {
			return nil, err
		}
		ps = append(ps, global...)
	}
	if r.gitDir != nil {
		f, err := r.gitDir.Open("info/exclude")
		if err == nil {
			data, rerr := io.ReadAll(f)
			f.Close()
			if rerr != nil {
				return nil, fmt.Errorf("read info/exclude: %w", rerr)
			}
			ps = append(ps, parseIgnore(data, nil)...)
		}
	}
	return ps, nil
}

// statCache knows the blob hash of working-tree files that are unchanged
// since git last wrote the index, as git's own stat cache does, so that
// unchanged files need not be read and hashed.
type statCache struct {
	entries map[string]*index.Entry
	written time.Time // the index file's modification time
}

func (r *Repo) statCache() *statCache {
	if r.gitDir == nil {
		return nil
	}
	fi, err := r.gitDir.Stat("index")
	if err != nil {
		return nil
	}
	idx, err := r.git.Storer.Index()
	if err != nil {
		return nil
	}
	c := &statCache{entries: make(map[string]*index.Entry, len(idx.Entries)), written: fi.ModTime()}
	for _, e := range idx.Entries {
		if e.Stage == mergedStage && !e.IntentToAdd {
			c.entries[e.Name] = e
		}
	}
	return c
}

// lookup returns the blob hash of the file at p if its stat data still
// matches the index, or "" when the file must be hashed. Entries written in
// the same instant as the index are "racily clean" and never trusted.
func (c *statCache) lookup(p string, info fs.FileInfo) string {
	if c == nil {
		return ""
	}
	e, ok := c.entries[p]
	if !ok || int64(e.Size) != info.Size()&0xffffffff {
		return ""
	}
	mtime := info.ModTime()
	if !e.ModifiedAt.Equal(mtime) || !mtime.Before(c.written) {
		return ""
	}
	return e.Hash.String()
}
