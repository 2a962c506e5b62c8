package answer

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/kbqdev/kbq/artifact"
	"github.com/kbqdev/kbq/internal/cli"
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

// Opened is an open artifact and the root of the repository it was found
// in ("" outside one).
type Opened struct {
	*query.Index
	RepoRoot string

	s     *cli.Streams
	check *query.FreshnessCheck // nil when there is nothing to check
	fresh *query.Freshness
}

// Fresh says whether the artifact is behind the repository; zero when it
// was named by --index or $KBQ_INDEX. The comparison runs beside the
// command's own work from Open on (it is a stat call per knowledge file);
// Fresh waits for it.
func (o *Opened) Fresh() query.Freshness {
	if o.fresh == nil {
		f := query.Freshness{}
		if o.check != nil {
			f = o.check.Result(o.Index)
		}
		o.fresh = &f
	}
	return *o.fresh
}

// Close prints the stale-artifact notice, if any, and closes the index.
func (o *Opened) Close() error {
	if n := o.Fresh().Notice; n != "" {
		fmt.Fprintf(o.s.Err, "kbq: note: %s\n", n)
	}
	return o.Index.Close()
}

// Open finds and opens the artifact, and starts comparing it with the
// repository; Close prints a stale-artifact notice.
func Open(s *cli.Streams, indexDir string) (*Opened, error) {
	cwd, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	dir, root, err := query.Locate(indexDir, s.Getenv("KBQ_INDEX"), cwd)
	if err != nil {
		return nil, err
	}
	var check *query.FreshnessCheck
	if root != "" && indexDir == "" && s.Getenv("KBQ_INDEX") == "" {
		check = query.CheckFreshness(dir, root)
	}
	ix, err := query.Open(dir)
	if err != nil {
		return nil, ExplainOpenError(dir, err)
	}
	return &Opened{Index: ix, RepoRoot: root, s: s, check: check}, nil
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
