// Package kbccli implements the kbc command line: the knowledge compiler.
package kbccli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"runtime/pprof"
	"strconv"

	"github.com/kbqdev/kbq/artifact"
	"github.com/kbqdev/kbq/authoring"
	"github.com/kbqdev/kbq/compiler"
	"github.com/kbqdev/kbq/gitsource"
	"github.com/kbqdev/kbq/internal/cli"
	"github.com/kbqdev/kbq/internal/version"
)

// globalOptions apply to every command.
type globalOptions struct {
	dir string // -C: run as if started in dir
}

const exitCodesHelp = `EXIT CODES:
   0  success
   1  validation errors (diagnostics say which)
   2  usage, I/O or repository errors (the message says what to do)`

// Main runs kbc with args (without the program name) and returns its exit
// code.
func Main(args []string, s *cli.Streams) int {
	tuneGC(s)
	if path := s.Getenv(CPUProfileEnv); path != "" {
		stop, err := startCPUProfile(path)
		if err != nil {
			fmt.Fprintf(s.Err, "kbc: %s: %v\n", CPUProfileEnv, err)
			return 2
		}
		defer stop()
	}
	g := &globalOptions{}
	app := &cli.Command{Name: "kbc", Usage: "compile a repository's knowledge into a kbq artifact", Commands: []*cli.Command{
		newInitCommand(s, g),
		newBuildCommand(s, g),
		newCheckCommand(s, g),
		newRememberCommand(s, g),
		newForgetCommand(s, g),
		newPruneCommand(s, g),
		newPublishCommand(s, g),
		newUnpublishCommand(s),
		newGrantCommand(s),
		newCompactCommand(s, g),
		newDiffCommand(s, g),
		newDriftCommand(s, g),
		newHooksCommand(s, g),
		newMCPCommand(s, g),
		newWatchCommand(s, g),
	}}
	app.Version = func() string {
		return version.Describe("artifact format " + strconv.Itoa(artifact.FormatVersion))
	}
	app.Description = `kbc reads the markdown knowledge of a git repository straight from git
objects: .kb/ directories at any depth (context.md, memories/, articles/,
topics), AGENTS.md, CLAUDE.md and GEMINI.md files, and the personal global
scope. It validates their frontmatter like a compiler and compiles a
versioned, reproducible search artifact (.kbq/) that kbq serves.

   kbc init               set the repository up: .kb/, configuration, hook, CI
   kbc build              compile the working tree into .kbq/ (HEAD when CI=true)
   kbc check --staged     validate what the next commit will hold
   kbc remember "TEXT"    write a memory
   kbc hooks install      check every commit's knowledge
   kbc diff main          what a branch changes, for a pull request
   kbc drift              knowledge naming files changed since it was
   kbq search "rollback"  search the artifact

` + exitCodesHelp
	app.Flags = []cli.Flag{
		&cli.StringFlag{Name: "C", Complete: cli.Dirs, Usage: "run as if kbc was started in `DIR`", Destination: &g.dir},
	}
	cli.Completion(app, s)
	return cli.Run(app, args, s, exitCode)
}

// exitCode maps the errors of kbc's commands to exit codes.
func exitCode(err error) (int, bool) {
	switch {
	case errors.Is(err, compiler.ErrInvalid), errors.Is(err, authoring.ErrNoMemory):
		return cli.ExitFailure, true
	case errors.Is(err, authoring.ErrMemoryText), errors.Is(err, authoring.ErrNotMemory), errors.Is(err, authoring.ErrUnreachable):
		return cli.ExitError, true
	case errors.Is(err, gitsource.ErrNotRepository), errors.Is(err, gitsource.ErrUnknownRevision),
		errors.Is(err, gitsource.ErrDamaged), errors.Is(err, compiler.ErrOutput):
		return cli.ExitError, true
	}
	return 0, false
}

// resolvedWorkDir is the working directory, absolute, with symbolic links
// resolved as scope directories are.
func (g *globalOptions) resolvedWorkDir() (string, error) {
	wd, err := filepath.Abs(g.workDir())
	if err != nil {
		return "", err
	}
	if resolved, err := filepath.EvalSymlinks(wd); err == nil {
		wd = resolved
	}
	return wd, nil
}

func (g *globalOptions) workDir() string {
	if g.dir != "" {
		return g.dir
	}
	return "."
}

// CPUProfileEnv names a file for a CPU profile of the whole command, for
// finding where a build's time goes (bench/speed.sh does, when the build
// misses its target): go tool pprof -top kbc FILE.
const CPUProfileEnv = "KBC_CPUPROFILE"

// startCPUProfile profiles the process into path until stop.
func startCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}

// tuneGC trades memory for fewer collections, within a ceiling: builds
// allocate heavily in short bursts (decoding manifests, analyzing text),
// and the default settings collect many times on small heaps. The soft
// memory limit keeps large builds under 300 MB, with mapped files; on
// large corpora the limit is what sets how often the collector runs (at
// 30 copies of PowerShell-Docs, a third of the build's CPU at 200 MB),
// so it is as high as that ceiling allows. GOGC and GOMEMLIMIT override
// both.
func tuneGC(s *cli.Streams) {
	if s.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	if s.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(240 << 20)
	}
}

// paceBuildGC sets the collector's pace for one build. A build from
// nothing lets the heap grow to three times what it holds (GOGC=200):
// its garbage is short-lived, and the collector ran a tenth of its CPU
// at the default pace, while a heap let grow further is fresh memory,
// which costs a page fault a page (3,088 files, hyperfine, 12 runs each:
// 951 ms at 100, 891 at 150, 850 at 200, 855 at 300; an earlier machine
// took 1.66 s at 400 against 1.45 s at 100). The memory limit still
// governs large builds. An incremental build keeps tuneGC's pace, as it
// decodes the previous manifest (100 ms against 110 ms at 100). Set per
// build, as kbc watch builds again and again.
func paceBuildGC(s *cli.Streams, full bool) {
	if s.Getenv("GOGC") != "" {
		return
	}
	if full {
		debug.SetGCPercent(200)
	} else {
		debug.SetGCPercent(400)
	}
}
