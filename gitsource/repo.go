package gitsource

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/storage"
	"github.com/go-git/go-git/v5/storage/filesystem"
	"github.com/go-git/go-git/v5/storage/filesystem/dotgit"

	"github.com/kbqdev/kbq/internal/gitdir"
)

// Repo is an open git repository.
type Repo struct {
	git    *git.Repository
	root   string           // absolute working tree root; "" when bare
	gitDir billy.Filesystem // the repository directory, common dir resolved
	// objects is held while go-git reads objects, which it is not safe to
	// do concurrently, and while it forgets its list of packs (retry.go).
	// Loose objects, most of what a build reads, are read without it.
	objects sync.Mutex
	index   indexMemo

	shallowOnce sync.Once
	shallow     map[string]bool
}

// readOnlySafeExtensions are repository extensions that change nothing about
// how objects, refs and the index are read. go-git refuses to open a
// repository that declares any extension it does not implement, so Open
// hides these from it (git sparse-checkout, for one, turns on
// worktreeConfig).
var readOnlySafeExtensions = map[string]bool{
	"worktreeconfig":  true,
	"preciousobjects": true,
	"noop":            true,
	"noop-v1":         true,
}

// Open opens the repository containing path, looking in parent directories
// as git does, and following linked worktrees to their common directory.
func Open(path string) (*Repo, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(abs); err != nil {
		return nil, fmt.Errorf("open repository: %w", err)
	}
	// As git does, a directory that is a repository itself (a bare one)
	// is used before any parent's .git.
	var repo *git.Repository
	if gitdir.IsBare(abs) {
		repo, err = git.PlainOpen(abs)
	} else {
		repo, err = git.PlainOpenWithOptions(abs, &git.PlainOpenOptions{DetectDotGit: true, EnableDotGitCommonDir: true})
	}
	if errors.Is(err, git.ErrUnknownExtension) || errors.Is(err, git.ErrUnsupportedExtensionRepositoryFormatVersion) {
		repo, err = openIgnoringSafeExtensions(abs)
	}
	switch {
	case errors.Is(err, git.ErrRepositoryNotExists):
		return nil, fmt.Errorf("%s: %w (run kbc inside a git repository, or git init)", path, ErrNotRepository)
	case err != nil:
		return nil, fmt.Errorf("open repository at %s: %w", path, err)
	}
	r := &Repo{git: repo}
	storer := repo.Storer
	if safe, ok := storer.(safeExtensionStorer); ok {
		storer = safe.Storer
	}
	if st, ok := storer.(*filesystem.Storage); ok {
		r.gitDir = st.Filesystem()
	}
	if wt, err := repo.Worktree(); err == nil {
		r.root = wt.Filesystem.Root()
	} else if !errors.Is(err, git.ErrIsBareRepository) {
		return nil, fmt.Errorf("open working tree: %w", err)
	}
	return r, nil
}

// Root is the absolute path of the working tree, or "" for a bare repository.
func (r *Repo) Root() string { return r.root }

// Git exposes the underlying go-git repository.
func (r *Repo) Git() *git.Repository { return r.git }

// Head returns the commit HEAD points to, or the zero hash on an unborn
// branch.
func (r *Repo) Head() (plumbing.Hash, error) {
	ref, err := r.git.Head()
	if errors.Is(err, plumbing.ErrReferenceNotFound) {
		return plumbing.ZeroHash, nil
	}
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("read HEAD: %w", err)
	}
	return ref.Hash(), nil
}

// Branch returns the name of the branch HEAD is on, born or not, or ""
// when HEAD is detached.
func (r *Repo) Branch() string {
	ref, err := r.git.Storer.Reference(plumbing.HEAD)
	if err != nil || ref.Type() != plumbing.SymbolicReference || !ref.Target().IsBranch() {
		return ""
	}
	return ref.Target().Short()
}

// openIgnoringSafeExtensions opens the repository like PlainOpenWithOptions,
// but shows go-git a configuration without the extensions that do not
// matter to a reader. Any other extension still fails, by name.
func openIgnoringSafeExtensions(path string) (*git.Repository, error) {
	d, err := gitdir.Find(path)
	if err != nil {
		return nil, err
	}
	dot, common := osfs.New(d.Git), osfs.New(d.Common)
	st := filesystem.NewStorage(dotgit.NewRepositoryFilesystem(dot, common), cache.NewObjectLRUDefault())
	var wt billy.Filesystem
	if d.Worktree != "" {
		wt = osfs.New(d.Worktree)
	}
	return git.Open(safeExtensionStorer{st}, wt)
}

type safeExtensionStorer struct{ storage.Storer }

func (s safeExtensionStorer) Config() (*config.Config, error) {
	cfg, err := s.Storer.Config()
	if err != nil || cfg.Raw == nil || !cfg.Raw.HasSection("extensions") {
		return cfg, err
	}
	section := cfg.Raw.Section("extensions")
	var unsafe []string
	for _, opt := range section.Options {
		if !readOnlySafeExtensions[strings.ToLower(opt.Key)] {
			unsafe = append(unsafe, "extensions."+opt.Key+"="+opt.Value)
		}
	}
	if len(unsafe) > 0 {
		return nil, fmt.Errorf("%w: %s (kbc reads repositories with SHA-1 objects and files-backend refs; sha256 objects and reftable refs are not supported yet)",
			ErrUnsupported, strings.Join(unsafe, ", "))
	}
	clone := *cfg
	raw := *cfg.Raw
	raw.Sections = nil
	for _, sec := range cfg.Raw.Sections {
		if sec.Name != section.Name {
			raw.Sections = append(raw.Sections, sec)
		}
	}
	clone.Raw = &raw
	return &clone, nil
}

// CommitTime returns the committer time of the commit with the given hash.
func (r *Repo) CommitTime(hash string) (time.Time, error) {
	c, err := r.git.CommitObject(plumbing.NewHash(hash))
	if err != nil {
		return time.Time{}, fmt.Errorf("read commit %s: %w", hash, err)
	}
	return c.Committer.When, nil
}

// DefaultBranch returns the branch a repository's main line lives on, and
// where that came from: the remote origin's default branch (origin/HEAD,
// which git clone sets), else git's init.defaultBranch, else "main".
func (r *Repo) DefaultBranch() (branch, from string) {
	ref, err := r.git.Storer.Reference(plumbing.NewRemoteHEADReferenceName("origin"))
	if err == nil && ref.Type() == plumbing.SymbolicReference {
		if name, ok := strings.CutPrefix(ref.Target().String(), "refs/remotes/origin/"); ok && name != "" {
			return name, "the default branch of origin"
		}
	}
	// The repository's configuration, then the user's, then the system's.
	configs := []func() (*config.Config, error){
		r.git.Config,
		func() (*config.Config, error) { return config.LoadConfig(config.GlobalScope) },
		func() (*config.Config, error) { return config.LoadConfig(config.SystemScope) },
	}
	for _, load := range configs {
		if cfg, err := load(); err == nil && cfg.Raw != nil {
			if name := cfg.Raw.Section("init").Option("defaultBranch"); name != "" {
				return name, "git's init.defaultBranch"
			}
		}
	}
	return "main", "neither origin/HEAD nor init.defaultBranch is set"
}

// Shallow reports whether the repository is a shallow clone (git clone
// --depth, actions/checkout's default): its history stops at the commits
// its shallow file lists.
func (r *Repo) Shallow() bool { return len(r.shallowCommits()) > 0 }

// shallowCommits are the commits a shallow clone's history stops at.
func (r *Repo) shallowCommits() map[string]bool {
	r.shallowOnce.Do(func() {
		if r.gitDir == nil {
			return
		}
		f, err := r.gitDir.Open("shallow")
		if err != nil {
			return
		}
		defer f.Close()
		data, err := io.ReadAll(io.LimitReader(f, 64<<20))
		if err != nil {
			return
		}
		r.shallow = map[string]bool{}
		for _, line := range strings.Fields(string(data)) {
			r.shallow[line] = true
		}
	})
	return r.shallow
}

// ShallowHint ends the error of a command that needs history a shallow
// clone lacks; "" in a complete clone.
func (r *Repo) ShallowHint() string {
	if !r.Shallow() {
		return ""
	}
	return "; this is a shallow clone, whose history stops short: fetch the rest with git fetch --unshallow (in GitHub Actions, actions/checkout with fetch-depth: 0)"
}
