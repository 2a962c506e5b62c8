// Package kbqcli implements the kbq command line: the read-only query
// binary. It imports neither the compiler nor go-git.
package kbqcli

import (
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/kbqdev/kbq/artifact"
	"github.com/kbqdev/kbq/internal/cli"
	"github.com/kbqdev/kbq/internal/version"
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

// Main runs kbq with args (without the program name) and returns its exit
// code.
func Main(args []string, s *cli.Streams) int {
	// Bluge logs snapshot problems to the standard logger before returning
	// them as errors; the errors are enough.
	log.SetOutput(io.Discard)
	app := &cli.Command{Name: "kbq", Usage: "search the knowledge compiled by kbc", Commands: []*cli.Command{
		newSearchCommand(s),
		newGetCommand(s),
		newListCommand(s),
		newContextCommand(s),
		newStatsCommand(s),
		newEvalCommand(s),
		newServerCommand(s, "serve", "serve the knowledge over a read-only HTTP JSON API and MCP", "kbq serve [--addr 127.0.0.1:7419] [--allow-remote] [--allow-origin URL]"),
		newServerCommand(s, "mcp", "serve the knowledge to agents over the Model Context Protocol (stdio)", "kbq mcp [--index DIR]"),
	}}
	app.Version = func() string {
		return version.Describe("artifact format " + strconv.Itoa(artifact.FormatVersion))
	}
	app.Description = `kbq answers questions from the artifact kbc compiles: for people, scripts,
CI and AI coding agents. It never writes the artifact.

It finds the artifact by --index DIR, else $KBQ_INDEX, else .kbq/ at the
root of the git repository holding the current directory.

   kbq search "how do we roll back a deploy"
   kbq get deploy/rollback
   kbq context --dir services/api --wrap

` + ExitCodesHelp
	var dir string
	app.Flags = []cli.Flag{
		&cli.StringFlag{Name: "C", Usage: "run as if kbq was started in `DIR`", Destination: &dir},
	}
	app.Before = func(*cli.Context) error {
		if dir == "" {
			return nil
		}
		if err := os.Chdir(dir); err != nil {
			return cli.Usagef("-C %s: %v", dir, errors.Unwrap(err))
		}
		return nil
	}
	cli.Completion(app, s)
	return cli.Run(app, args, s, exitCode)
}

// exitCode maps the errors of kbq's commands to exit codes.
func exitCode(err error) (int, bool) {
	var passed exitStatus
	if errors.As(err, &passed) {
		return int(passed), true
	}
	switch {
	case errors.Is(err, query.ErrNoResults), errors.Is(err, query.ErrNotFound):
		return cli.ExitFailure, true
	case errors.Is(err, artifact.ErrNoArtifact), errors.Is(err, artifact.ErrCorrupt),
		errors.Is(err, artifact.ErrIncompatible), errors.Is(err, query.ErrUnknownScope):
		return cli.ExitError, true
	}
	return 0, false
}

// IndexFlag is --index, which every command takes.
func IndexFlag(dst *string) cli.Flag {
	return &cli.StringFlag{Name: "index", Usage: "read the artifact in `DIR` (default: $KBQ_INDEX, else .kbq/ at the repository root)", Destination: dst}
}

// Opened is an open artifact and the root of the repository it was found
// in ("" outside one).
type Opened struct {
	*query.Index
	RepoRoot string

	s       *cli.Streams
	checked chan query.Freshness // nil when there is nothing to check
	fresh   *query.Freshness
}

// Fresh says whether the artifact is behind the repository; zero when it
// was named by --index or $KBQ_INDEX. The comparison runs beside the
// command's own work from Open on (it is a stat call per knowledge file);
// Fresh waits for it.
func (o *Opened) Fresh() query.Freshness {
	if o.fresh == nil {
		f := query.Freshness{}
		if o.checked != nil {
			f = <-o.checked
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
	ix, err := query.Open(dir)
	if err != nil {
		return nil, ExplainOpenError(dir, err)
	}
	o := &Opened{Index: ix, RepoRoot: root, s: s}
	if root != "" && indexDir == "" && s.Getenv("KBQ_INDEX") == "" {
		o.checked = make(chan query.Freshness, 1)
		go func() { o.checked <- ix.Freshness(root) }()
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

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
