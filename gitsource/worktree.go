package gitsource

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"iter"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
	"github.com/go-git/go-git/v5/plumbing/format/index"

	"github.com/kbqdev/kbq/internal/plainread"
)

// Worktree returns the working tree as it is on disk, leaving out what git
// ignores: .gitignore files, .git/info/exclude and core.excludesFile.
func (r *Repo) Worktree() (Snapshot, error) {
	return r.worktree(false)
}

// WorktreeOnce is Worktree for a snapshot listed once, as a build lists
// its source: git's decoded index, the stat cache that spares reading
// unchanged files to learn their blobs, is forgotten once the listing is
// done, rather than kept for the next (a build of 92,640 files held 20 MB
// of it to its end). A second listing reads every file to learn its blob.
func (r *Repo) WorktreeOnce() (Snapshot, error) {
	return r.worktree(true)
}

func (r *Repo) worktree(once bool) (Snapshot, error) {
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
	s := &dirSnapshot{root: r.root, base: base, gitignore: true, once: once, info: Info{Mode: "worktree"}}
	if !head.IsZero() {
		s.info.Commit = head.String()
	}
	s.repo = r
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
	repo       *Repo // when set, its index is the stat cache
	cached     sync.Once
	cache      *statCache
	once       bool // WorktreeOnce's: the stat cache is dropped after a listing
	listed     int  // the stat cache's files, once it is dropped
	info       Info
	dirs       []DirStamp
	digest     func(rel string, entries []fs.DirEntry) uint64
}

// DigestDirs has each directory's entries, as listed, summed up by digest
// into its stamp (Dirs), on the goroutine that lists it.
func (s *dirSnapshot) DigestDirs(digest func(rel string, entries []fs.DirEntry) uint64) {
	s.digest = digest
}

// SizeHint is about how many files Files yields, once it has yielded one:
// the number git's index tracks.
func (s *dirSnapshot) SizeHint() int {
	if s.cache == nil {
		return s.listed
	}
	return len(s.cache.entries)
}

// Dirs returns the directories the last iteration of Files listed, with
// their modification times from before they were read and the digests of
// their entries.
func (s *dirSnapshot) Dirs() []DirStamp { return s.dirs }

// Root returns the directory the snapshot lists.
func (s *dirSnapshot) Root() string { return s.root }

func (s *dirSnapshot) Info() Info { return s.info }

func (s *dirSnapshot) Files() iter.Seq2[File, error] {
	return func(yield func(File, error) bool) {
		// The index, for the stat cache, is decoded while the first
		// directories are read.
		root := s.list()
		s.cached.Do(func() {
			if s.repo != nil {
				s.cache = s.repo.statCache()
			}
		})
		s.dirs = s.dirs[:0]
		s.emit(root, yield)
		if s.once && s.cache != nil {
			s.listed = len(s.cache.entries)
			s.cache = nil
			s.repo.index.forget()
		}
	}
}

// A walk reads directories on several goroutines, since most of its time
// is system calls (a stat per file), and yields their files in the order
// of a depth-first walk as each directory is ready.
type dirListing struct {
	rel     string // slash-separated, "" for the root
	ready   chan struct{}
	mod     int64 // modification time before it was read; 0 if unknown
	err     error
	digest  uint64
	entries []dirEntry
}

type dirEntry struct {
	file File
	sub  *dirListing // of a directory the walk enters
	err  error       // a file that could not be stat'ed
}

// walkers bounds the directories read at once.
const walkers = 8

// list starts reading the tree of directories below the root, and
// returns the root's listing, ready once its ready channel is closed.
func (s *dirSnapshot) list() *dirListing {
	slots := make(chan struct{}, walkers)
	var visit func(d *dirListing, patterns []gitignore.Pattern)
	visit = func(d *dirListing, patterns []gitignore.Pattern) {
		defer close(d.ready)
		slots <- struct{}{}
		defer func() { <-slots }()
		s.read(d, patterns, func(sub *dirListing, patterns []gitignore.Pattern) {
			go visit(sub, patterns)
		})
	}
	root := &dirListing{ready: make(chan struct{})}
	go visit(root, s.base)
	return root
}

// read lists the directory d, whose ignore rules so far are patterns, and
// calls enter for each subdirectory the walk descends into.
func (s *dirSnapshot) read(d *dirListing, patterns []gitignore.Pattern, enter func(*dirListing, []gitignore.Pattern)) {
	dir := filepath.Join(s.root, filepath.FromSlash(d.rel))
	var domain []string
	if d.rel != "" {
		domain = strings.Split(d.rel, "/")
	}
	if s.gitignore {
		ps, err := readIgnoreFile(filepath.Join(dir, ".gitignore"), domain)
		if err != nil {
			d.err = err
			return
		}
		patterns = append(patterns[:len(patterns):len(patterns)], ps...)
	}
	matcher := gitignore.NewMatcher(patterns)
	if fi, err := os.Stat(dir); err == nil {
		d.mod = fi.ModTime().UnixNano()
	}
	entries, stat, closeDir, err := readDir(dir)
	if err != nil {
		d.err = fmt.Errorf("read directory %s: %w", dir, err)
		return
	}
	defer closeDir()
	if s.digest != nil {
		d.digest = s.digest(d.rel, entries)
	}
	d.entries = make([]dirEntry, 0, len(entries))
	parts := make([]string, len(domain)+1)
	copy(parts, domain)
	for _, e := range entries {
		name := e.Name()
		if name == ".git" || (s.skipHidden && strings.HasPrefix(name, ".")) {
			continue
		}
		p := name
		if d.rel != "" {
			p = d.rel + "/" + name
		}
		parts[len(domain)] = name
		isDir := e.IsDir()
		if s.gitignore && matcher.Match(parts, isDir) {
			continue
		}
		switch t := e.Type(); {
		case isDir:
			if _, err := os.Lstat(filepath.Join(dir, name, ".git")); err == nil {
				d.entries = append(d.entries, dirEntry{file: File{Path: p, Kind: Submodule}})
				continue
			}
			sub := &dirListing{rel: p, ready: make(chan struct{})}
			d.entries = append(d.entries, dirEntry{sub: sub})
			enter(sub, patterns)
		case t&fs.ModeSymlink != 0:
			d.entries = append(d.entries, dirEntry{file: File{Path: p, Kind: Symlink}})
		case t.IsRegular():
			f := File{Path: p, Kind: Regular}
			st, err := stat(name)
			if err != nil {
				d.entries = append(d.entries, dirEntry{err: fmt.Errorf("stat %s: %w", p, err)})
				continue
			}
			if st.exec {
				f.Kind = Executable
			}
			f.Size, f.Mod = st.size, st.mod
			d.entries = append(d.entries, dirEntry{file: f})
		}
	}
}

// fileStat is what a listing keeps of a file's lstat.
type fileStat struct {
	size, mod int64 // mod in nanoseconds since 1970
	exec      bool
}

// emit yields the files of d and of the directories below it. It returns
// false when yield asked to stop or an error ended the walk.
func (s *dirSnapshot) emit(d *dirListing, yield func(File, error) bool) bool {
	<-d.ready
	if d.mod != 0 {
		s.dirs = append(s.dirs, DirStamp{Path: d.rel, Mod: d.mod, Digest: d.digest})
	}
	if d.err != nil {
		yield(File{}, d.err)
		return false
	}
	for _, e := range d.entries {
		switch {
		case e.err != nil:
			yield(File{}, e.err)
			return false
		case e.sub != nil:
			if !s.emit(e.sub, yield) {
				return false
			}
			continue
		}
		f := e.file
		if f.Kind.IsFile() {
			f.Blob = s.cache.lookup(f.Path, f.Size, f.Mod)
		}
		if !yield(f, nil) {
			return false
		}
	}
	return true
}

func (s *dirSnapshot) Read(f File, max int64) ([]byte, error) {
	name := filepath.Join(s.root, filepath.FromSlash(f.Path))
	// Read in a buffer of the size fstat gives, and a byte over to see
	// that the file ends there: growing one from nothing, as io.ReadAll
	// does, allocated three times the corpus on large builds. plainread
	// opens it without the five system calls os.Open adds for the poller.
	data, err := plainread.ReadFile(name, max)
	var tl *plainread.TooLargeError
	if errors.As(err, &tl) {
		return nil, tooLarge(f.Path, tl.Size, max)
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", f.Path, err)
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
	fi, err := r.indexInfo()
	if err != nil {
		return nil
	}
	idx, err := r.decodeIndex()
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

// lookup returns the blob hash of the file at p, of size bytes modified at
// mod (Unix nanoseconds), if that stat data still matches the index, or ""
// when the file must be hashed. Entries written in the same instant as the
// index are "racily clean" and never trusted.
func (c *statCache) lookup(p string, size, mod int64) string {
	if c == nil {
		return ""
	}
	e, ok := c.entries[p]
	if !ok || int64(e.Size) != size&0xffffffff {
		return ""
	}
	mtime := time.Unix(0, mod)
	if !e.ModifiedAt.Equal(mtime) || !mtime.Before(c.written) {
		return ""
	}
	return e.Hash.String()
}
