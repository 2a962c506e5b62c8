// Package kbqcli implements the kbq command line: the read-only query
// binary. It imports neither the compiler nor go-git.
package kbqcli

import (
	"errors"
	"io"
	"log"
	"os"
	"path/filepath"
	"strconv"

	"github.com/kbqdev/kbq/artifact"
	"github.com/kbqdev/kbq/internal/cli"
	"github.com/kbqdev/kbq/internal/door/reader"
	"github.com/kbqdev/kbq/internal/version"
	"github.com/kbqdev/kbq/query"
	"github.com/kbqdev/kbq/query/documents"
)

// Main runs kbq with args (without the program name) and returns its exit
// code. servers are the commands that serve the knowledge (kbq serve and
// kbq mcp, from internal/kbqserve), which cmd/kbq hands in.
func Main(args []string, s *cli.Streams, servers ...*cli.Command) int {
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
		newReposCommand(s),
	}}
	app.Commands = append(app.Commands, servers...)
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

` + reader.ExitCodesHelp
	var dir, index string
	app.Flags = []cli.Flag{
		&cli.StringFlag{Name: "C", Complete: cli.Dirs, Usage: "run as if kbq was started in `DIR`", Destination: &dir},
		&cli.StringFlag{Name: "index", Complete: cli.Dirs, Usage: "read the artifact in `DIR`, for every command (relative to -C)", Destination: &index},
	}
	app.Before = func(*cli.Context) error {
		if dir != "" {
			if err := os.Chdir(dir); err != nil {
				return cli.Usagef("-C %s: %v", dir, errors.Unwrap(err))
			}
		}
		if index != "" {
			// As $KBQ_INDEX, which a command's own --index overrides and
			// the servers inherit: the commands read the environment
			// through s, never the process's.
			abs, err := filepath.Abs(index)
			if err != nil {
				return err
			}
			getenv := s.Getenv
			s.Getenv = func(k string) string {
				if k == "KBQ_INDEX" {
					return abs
				}
				return getenv(k)
			}
		}
		return nil
	}
	cli.Completion(app, s)
	return cli.Run(app, args, s, exitCode)
}

// exitCode maps the errors of kbq's commands to exit codes.
func exitCode(err error) (int, bool) {
	switch {
	case errors.Is(err, query.ErrNoResults), errors.Is(err, documents.ErrNotFound):
		return cli.ExitFailure, true
	case errors.Is(err, artifact.ErrNoArtifact), errors.Is(err, artifact.ErrCorrupt),
		errors.Is(err, artifact.ErrIncompatible), errors.Is(err, query.ErrUnknownScope), errors.Is(err, query.ErrNothingToFind),
		errors.Is(err, query.ErrReplaced), errors.Is(err, query.ErrBadFilter):
		return cli.ExitError, true
	}
	return 0, false
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
