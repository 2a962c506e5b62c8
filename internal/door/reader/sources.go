package reader

import (
	"github.com/kbqdev/kbq/internal/access"

	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/kbqdev/kbq/artifact"
	"github.com/kbqdev/kbq/internal/cli"
	"github.com/kbqdev/kbq/internal/gitdir"
	"github.com/kbqdev/kbq/internal/postgres/pgread"
	"github.com/kbqdev/kbq/internal/reponame"
	"github.com/kbqdev/kbq/internal/repos"
	"github.com/kbqdev/kbq/internal/visible"
)

// Sources are the artifacts a command reads: one, found as Open finds it
// (or named by one --index), or several, named by --index more than once,
// by --repo, or by --all-repos, which read the user's list of repositories
// (kbq repos).
type Sources struct {
	Indexes  []string
	Repos    []string
	AllRepos bool
	// DB is the PostgreSQL database kbc publish wrote ("env": from
	// $KBQ_DATABASE_URL or libpq's variables); Repos then name its
	// repositories.
	DB string
}

// Flags are --index, --repo and --all-repos.
func (src *Sources) Flags() []cli.Flag {
	return []cli.Flag{
		&cli.StringSliceFlag{Name: "index", Complete: cli.Dirs, Destination: &src.Indexes,
			Usage: "read the artifact in `[NAME=]DIR` (default: $KBQ_INDEX, else .kbq/ at the repository root); more than once reads several as one"},
		&cli.StringSliceFlag{Name: "repo", Destination: &src.Repos,
			Usage: "read the repository `NAME` of kbq repos list (repeatable)"},
		&cli.BoolFlag{Name: "all-repos", Destination: &src.AllRepos, Usage: "read every repository of kbq repos list"},
		&cli.StringFlag{Name: "db", Destination: &src.DB,
			Usage: "read the repositories kbc publish wrote into the PostgreSQL database at `URL` (env: $KBQ_DATABASE_URL or libpq's PG* variables); --repo picks some"},
	}
}

// Several reports whether artifacts are named by repository (several, or
// one of kbq repos list or of a database): results then name theirs.
func (src *Sources) Several() bool {
	return len(src.Indexes) > 1 || len(src.Repos) > 0 || src.AllRepos || src.DB != ""
}

// One is the one artifact --index names, "" for the default.
func (src *Sources) One() string {
	if len(src.Indexes) == 1 {
		_, dir := splitNamed(src.Indexes[0])
		return dir
	}
	return ""
}

// A Target is an artifact Sources name: its name, its directory, and the
// root of its repository ("" when unknown).
type Target struct {
	Name, Dir, Root string
	// Visibility and OrgScope are a database's repository's: who may
	// read it, and its place among the org scopes (0: none).
	Visibility string
	OrgScope   int
	found      bool // the one artifact found from the working directory
}

// Found are the artifacts Sources name, what a user should know of them
// (a repository of the database not published yet, for one), and the
// rules of who may read them (a database's grants and visibilities; nil
// Grants when there are none to read).
type Found struct {
	Targets []Target
	Notes   []string
	Policy  access.Policy
	// Remote reads, from a database, what searches need of the files
	// the fetch left there (pgread.FetchPartly); nil when there are none.
	// Whoever takes the targets completes it, in time, and closes it.
	Remote *pgread.Remote
}

// Targets resolves the artifacts src names, without opening them, and
// says what a user should know of them (a repository of the database not
// published yet, for one).
func Targets(getenv func(string) string, src *Sources) (*Found, error) {
	if src.DB != "" {
		return dbTargets(getenv, src, true)
	}
	var targets []Target
	for _, spec := range src.Indexes {
		name, dir := splitNamed(spec)
		dir, root, err := artifactDir(dir)
		if err != nil {
			return nil, err
		}
		named := name != ""
		if !named {
			name = nameOf(root, dir)
		}
		if err := reponame.Check(name); err != nil {
			if named {
				return nil, cli.Usagef("--index %s: %v", visible.Line(spec), err)
			}
			return nil, cli.Usagef("--index %s: %v; name it with --index NAME=%s", visible.Line(spec), err, visible.Line(dir))
		}
		targets = append(targets, Target{Name: name, Dir: dir, Root: root})
	}
	if len(src.Repos) > 0 || src.AllRepos {
		list, err := repos.Load(getenv)
		if err != nil {
			return nil, err
		}
		picked := list.Repos
		if !src.AllRepos {
			picked = nil
			for _, name := range src.Repos {
				r, ok := list.Find(name)
				if !ok {
					return nil, cli.Usagef("--repo %s: no repository of that name in %s (kbq repos list shows them; kbq repos add PATH adds one)", name, repos.File(getenv))
				}
				picked = append(picked, r)
			}
		}
		if len(picked) == 0 {
			return nil, cli.Usagef("--all-repos: no repository is listed in %s: add them with kbq repos add PATH", repos.File(getenv))
		}
		for _, r := range picked {
			if err := reponame.Check(r.Name); err != nil {
				return nil, cli.Usagef("%s: %v: kbq repos rm it, and add it again with --name", repos.File(getenv), err)
			}
			targets = append(targets, Target{Name: r.Name, Dir: filepath.Join(r.Path, artifact.DefaultDir), Root: r.Path})
		}
	}
	// Two of one name cannot be told apart in results, filters and
	// REPO:PATH references.
	for i, t := range targets {
		for _, o := range targets[:i] {
			if strings.EqualFold(o.Name, t.Name) {
				return nil, cli.Usagef("%s and %s are both named %s: name each with --index NAME=DIR, such as --index a=%s --index b=%s",
					visible.Line(o.Dir), visible.Line(t.Dir), t.Name, visible.Line(o.Dir), visible.Line(t.Dir))
			}
		}
	}
	return &Found{Targets: targets}, nil
}

// Fresh reports whether t is a repository's own artifact, whose freshness
// can be told.
func (t Target) Fresh() bool {
	return t.Root != "" && t.Dir == filepath.Join(t.Root, artifact.DefaultDir)
}

// splitNamed splits NAME=DIR (NAME may hold slashes, github.com/org/api);
// a path holding = is left whole when it exists.
func splitNamed(spec string) (name, dir string) {
	name, dir, ok := strings.Cut(spec, "=")
	if !ok || name == "" {
		return "", spec
	}
	if _, err := os.Stat(spec); err == nil {
		return "", spec
	}
	return name, dir
}

// artifactDir returns the artifact dir names, which may be an artifact
// or a repository holding one, and that repository's root ("" when it is
// in none).
func artifactDir(dir string) (string, string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", "", err
	}
	if _, err := os.Stat(filepath.Join(abs, artifact.ManifestFile)); err != nil {
		if _, err := os.Stat(filepath.Join(abs, artifact.DefaultDir, artifact.ManifestFile)); err == nil {
			abs = filepath.Join(abs, artifact.DefaultDir)
		}
	}
	root := ""
	if d, err := gitdir.Find(filepath.Dir(abs)); err == nil {
		root = d.Worktree
	}
	return abs, root, nil
}

// nameOf names the repository at root, whose artifact is in dir: by its
// origin remote, else by its directory.
func nameOf(root, dir string) string {
	if root != "" {
		if d, err := gitdir.Find(root); err == nil {
			if name := gitdir.RepoName(d.Origin()); name != "" {
				return name
			}
		}
		return filepath.Base(root)
	}
	if filepath.Base(dir) == artifact.DefaultDir {
		return filepath.Base(filepath.Dir(dir))
	}
	return filepath.Base(dir)
}

// RepoNameOf names the repository at root as OpenMany does.
func RepoNameOf(root string) string { return nameOf(root, "") }

// dbTargets fetches the repositories of src.DB into the cache, as
// artifacts; partly, it leaves the large segments' stored fields in the
// database for Found.Remote to fetch as results read them.
func dbTargets(getenv func(string) string, src *Sources, partly bool) (*Found, error) {
	if len(src.Indexes) > 0 || src.AllRepos {
		return nil, cli.Usagef("--db reads the database's repositories: name some with --repo, not --index or --all-repos")
	}
	url := src.DB
	if url == "env" {
		url = ""
	}
	cfg, err := pgread.Config(url, getenv)
	if err != nil {
		return nil, cli.Usagef("--db: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cache, err := dbCache(getenv)
	if err != nil {
		return nil, err
	}
	conn, err := pgread.Connect(ctx, cfg)
	if err != nil {
		return nil, err
	}
	fetch := pgread.Fetch
	if partly {
		fetch = pgread.FetchPartly // which keeps conn, or closes it
	} else {
		defer conn.Close(context.Background())
	}
	fetched, err := fetch(ctx, conn, cache, src.Repos)
	if errors.Is(err, pgread.ErrNotPublished) {
		return nil, cli.Usagef("%v", err)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", pgread.Where(cfg), err)
	}
	found := &Found{Notes: fetched.Notes, Policy: access.Policy{Grants: fetched.Grants, Visibility: map[string]string{}}, Remote: fetched.Remote}
	for _, r := range fetched.Repos {
		found.Targets = append(found.Targets, Target{Name: r.Name, Dir: r.Dir, Visibility: r.Visibility, OrgScope: r.OrgScope})
		found.Policy.Visibility[r.Name] = r.Visibility
	}
	return found, nil
}

// dbCache is where the files of published artifacts are kept:
// $XDG_CACHE_HOME/kbq/db, else ~/.cache/kbq/db.
func dbCache(getenv func(string) string) (string, error) {
	if x := getenv("XDG_CACHE_HOME"); x != "" {
		return filepath.Join(x, "kbq", "db"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("no cache directory for the database's files: set XDG_CACHE_HOME")
	}
	return filepath.Join(home, ".cache", "kbq", "db"), nil
}

// OrgTargets fetches the org scopes names lists, in that order, from the
// database of $KBQ_DATABASE_URL.
func OrgTargets(getenv func(string) string, names []string) ([]Target, error) {
	found, err := dbTargets(getenv, &Sources{DB: "env", Repos: names}, false)
	if err != nil {
		return nil, err
	}
	var out []Target
	for i, name := range names {
		for _, t := range found.Targets {
			if t.Name == name {
				t.OrgScope = i + 1
				out = append(out, t)
			}
		}
	}
	return out, nil
}
