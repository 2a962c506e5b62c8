package reader

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/kbqdev/kbq/artifact"
	"github.com/kbqdev/kbq/internal/cli"
	"github.com/kbqdev/kbq/internal/postgres/pgread"
	"github.com/kbqdev/kbq/internal/version"
	"github.com/kbqdev/kbq/knowledge"
	"github.com/kbqdev/kbq/query"
)

// Version is kbq's version.
const Version = version.Version

// ExitCodesHelp lists kbq's exit codes for --help.
const ExitCodesHelp = `EXIT CODES:
   0  results
   1  no results (said on stderr)
   2  usage or artifact errors: missing, corrupt or incompatible (the message
      says what to run)`

// IndexFlag is --index, which every command takes.
func IndexFlag(dst *string) cli.Flag {
	return &cli.StringFlag{Name: "index", Complete: cli.Dirs, Usage: "read the artifact in `DIR` (default: $KBQ_INDEX, else .kbq/ at the repository root)", Destination: dst}
}

// Opened are the artifacts a command reads, open: one, found as the
// command line finds it, or several (Sources), with the root of each one's
// repository ("" when unknown).
type Opened struct {
	*Artifacts
	// RepoRoot is the root of the one repository read; "" when several
	// are, or outside one.
	RepoRoot string

	indexes []*query.Index          // by part, open
	roots   []string                // by part
	checks  []*query.FreshnessCheck // by part; nil when there is nothing to check
	fresh   []*query.Freshness
	notes   []string // said when the artifacts were found
	remote  *pgread.Remote
}

// Fresh says whether the first artifact is behind its repository; zero
// when it was named by --index or $KBQ_INDEX. The comparison runs beside
// the command's own work from Open on (a stat call per knowledge file);
// Fresh waits for it.
func (o *Opened) Fresh() query.Freshness { return o.freshOf(0) }

func (o *Opened) freshOf(i int) query.Freshness {
	if o.fresh[i] == nil {
		f := query.Freshness{}
		if o.checks[i] != nil {
			f = o.checks[i].Result(o.indexes[i])
		}
		o.fresh[i] = &f
	}
	return *o.fresh[i]
}

// Root is the root of repository name's working tree, "" when unknown.
func (o *Opened) Root(name string) string {
	for i, p := range o.Parts() {
		if p.Name == name {
			return o.roots[i]
		}
	}
	return ""
}

// Notes are what a user should know of the artifacts: that one is behind
// its repository, or that a repository asked of the database is not
// published. A command says them when it is done.
func (o *Opened) Notes() []string {
	notes := slices.Clone(o.notes)
	for i, p := range o.Parts() {
		if n := o.freshOf(i).Notice; n != "" {
			if p.Name != "" {
				n = p.Name + ": " + n
			}
			notes = append(notes, n)
		}
	}
	return notes
}

// Close closes the artifacts; read from a database in part, it first
// fetches the rest into the cache.
func (o *Opened) Close() error { return o.close(true) }

// Exit is Close for a process about to end. The artifacts' mappings and
// files are left to the exit, which releases them without unmapping each
// while the runtime's other threads run (for a fresh search, 0.1 ms of
// 4); a database's files are fetched into the cache as Close does.
func (o *Opened) Exit() error {
	if o.remote == nil {
		return nil
	}
	return o.Close()
}

// close closes the artifacts, and with complete first fetches what is
// left of a database's files.
func (o *Opened) close(complete bool) error {
	var errs []error
	for _, ix := range o.indexes {
		errs = append(errs, ix.Close())
	}
	if o.remote == nil {
		return errors.Join(errs...)
	}
	if complete {
		// What searches did not read is fetched now, after their
		// output, so that the next run finds it all in the cache.
		ctx, cancel := context.WithTimeout(context.Background(), completeTimeout)
		if err := o.remote.Complete(ctx); err != nil {
			errs = append(errs, fmt.Errorf("the database's files were not all kept in the cache, and the next search fetches them again: %w", err))
		}
		cancel()
	}
	o.remote.Close()
	return errors.Join(errs...)
}

// completeTimeout bounds the fetch, on closing, of what searches did not
// read of the database's files.
const completeTimeout = 2 * time.Minute

// Open opens the artifacts src names: the one found from the current
// directory (or named by one --index, or $KBQ_INDEX), or several read as
// one. It starts comparing each repository's own artifact with its
// working tree; Notes says which are behind.
func Open(getenv func(string) string, src *Sources) (_ *Opened, err error) {
	var targets []Target
	o := &Opened{}
	if src.Several() {
		found, err := Targets(getenv, src)
		if err != nil {
			return nil, err
		}
		targets, o.notes, o.remote = found.Targets, found.Notes, found.Remote
	} else {
		cwd, err := os.Getwd()
		if err != nil {
			return nil, err
		}
		dir, root, err := query.Locate(src.One(), getenv("KBQ_INDEX"), cwd)
		if err != nil {
			return nil, err
		}
		// An artifact named by --index or $KBQ_INDEX has no freshness to
		// tell.
		found := src.One() == "" && getenv("KBQ_INDEX") == ""
		targets = []Target{{Dir: dir, Root: root, found: found && root != ""}}
		o.RepoRoot = root
	}
	defer func() {
		if err != nil {
			o.close(false)
		}
	}()
	var parts []query.Part
	for i := 0; i < len(targets); i++ { // the org scopes of the first may join
		t := targets[i]
		// The check reads only the worktree record: started first, it
		// runs beside the opening as well as the search.
		var check *query.FreshnessCheck
		if t.found || t.Fresh() {
			check = query.CheckFreshness(t.Dir, t.Root)
		}
		ix, err := query.Open(t.Dir)
		if err != nil {
			if t.Name == "" {
				return nil, ExplainOpenError(t.Dir, err)
			}
			return nil, fmt.Errorf("%s: %w", t.Name, ExplainOpenError(t.Dir, err))
		}
		o.indexes = append(o.indexes, ix)
		parts = append(parts, query.Part{Name: t.Name, Index: ix, Org: t.OrgScope})
		o.roots = append(o.roots, t.Root)
		o.checks = append(o.checks, check)
		o.fresh = append(o.fresh, nil)
		if i == 0 && !src.Several() && len(ix.Manifest.Config.Org) > 0 && getenv("KBQ_DATABASE_URL") != "" {
			// The org scopes its configuration names, from the database.
			orgs, err := OrgTargets(getenv, ix.Manifest.Config.Org)
			if err != nil {
				o.notes = append(o.notes, fmt.Sprintf("the org scopes of %s are not in force: %v", knowledge.ConfigPath, err))
				continue
			}
			parts[0].Name = nameOf(t.Root, t.Dir)
			targets = append(targets, orgs...)
		}
	}
	if o.Artifacts, err = NewArtifacts(parts); err != nil {
		return nil, cli.Usagef("%v (name them with --index NAME=DIR)", err)
	}
	return o, nil
}

// ExplainOpenError says what to run for each way an artifact can be
// unusable.
func ExplainOpenError(dir string, err error) error {
	switch {
	case errors.Is(err, artifact.ErrNoArtifact):
		return fmt.Errorf("%w: %s has no manifest.json: build the artifact with `kbc build`, or point at one with --index DIR", artifact.ErrNoArtifact, dir)
	case errors.Is(err, artifact.ErrCorrupt):
		return fmt.Errorf("%w: rebuild it with `kbc build`", err)
	}
	return err
}

// RepoDir turns a --dir value (relative to the working directory) into a
// slash-separated path relative to the repository root; "" is the root.
func RepoDir(root, dir string) (string, error) {
	if root == "" {
		if dir == "" || dir == "." {
			return "", nil
		}
		return strings.Trim(filepath.ToSlash(dir), "/"), nil
	}
	if dir == "" {
		dir = "."
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	rel, ok := InRepo(root, abs)
	if !ok {
		return "", cli.Usagef("--dir %s is outside the repository at %s", dir, root)
	}
	return rel, nil
}

// InRepo returns the absolute path abs as a slash-separated path relative to
// the repository root ("" for the root itself), following symbolic links on
// both sides; false when abs is outside the repository.
func InRepo(root, abs string) (string, bool) {
	if resolved, err := filepath.EvalSymlinks(root); err == nil {
		root = resolved
	}
	if resolved, err := filepath.EvalSymlinks(abs); err == nil {
		abs = resolved
	}
	rel, err := filepath.Rel(root, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	if rel == "." {
		return "", true
	}
	return filepath.ToSlash(rel), true
}

// HereRelative turns the artifact's paths, relative to the repository
// root, into paths relative to the current directory, as git grep and rg
// print them, so that they open where the user stands. Paths stay as they
// are outside a repository, when the current directory is outside it, and
// for global knowledge.
func HereRelative(root string, paths []string) []string {
	if root == "" {
		return paths
	}
	wd, err := os.Getwd()
	if err != nil {
		return paths
	}
	here, ok := InRepo(root, wd)
	if !ok || here == "" {
		return paths
	}
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = p
		if strings.HasPrefix(p, knowledge.GlobalPathPrefix) {
			continue
		}
		if rel, err := filepath.Rel(filepath.FromSlash(here), filepath.FromSlash(p)); err == nil {
			out[i] = filepath.ToSlash(rel)
		}
	}
	return out
}

// HereOrAbsolute is path relative to the current directory when it is
// below it, else path.
func HereOrAbsolute(path string) string {
	wd, err := os.Getwd()
	if err != nil {
		return path
	}
	if rel, err := filepath.Rel(wd, path); err == nil && !strings.HasPrefix(rel, "..") {
		return filepath.ToSlash(rel)
	}
	return path
}
