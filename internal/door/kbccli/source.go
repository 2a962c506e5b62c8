package kbccli

import (
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/kbqdev/kbq/artifact"
	"github.com/kbqdev/kbq/compiler"
	"github.com/kbqdev/kbq/gitsource"
	"github.com/kbqdev/kbq/internal/cli"
	"github.com/kbqdev/kbq/internal/userdir"
	"github.com/kbqdev/kbq/knowledge"
)

// sourceOptions choose what a build or check reads.
type sourceOptions struct {
	rev          string
	revSet       bool // --rev was given, even as HEAD
	staged       bool
	worktree     bool
	global       bool
	noGlobal     bool
	contextFiles []string
	maxSize      string
	jobs         int
	// once: the source is listed once (a build), and what only a second
	// listing would use is not kept (gitsource.WorktreeOnce).
	once bool
}

func sourceFlags(o *sourceOptions, globalDefault string) []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "rev", Usage: "read the committed tree of `REV` (branch, tag, commit, HEAD~1); the default when CI=true is HEAD", Destination: &o.rev},
		&cli.BoolFlag{Name: "staged", Usage: "read git's index: what the next commit will hold (pre-commit hooks)", Destination: &o.staged},
		&cli.BoolFlag{Name: "worktree", Usage: "read the working tree, honouring .gitignore (the default, unless CI=true)", Destination: &o.worktree},
		&cli.BoolFlag{Name: "global", Usage: "include the global scope (" + globalDefault + ")", Destination: &o.global},
		&cli.BoolFlag{Name: "no-global", Usage: "leave the global scope out (the default when CI=true)", Destination: &o.noGlobal},
		contextFilesFlag(),
		&cli.StringFlag{Name: "max-file-size", Usage: "skip knowledge files over `SIZE` with an error (5MiB, 512KiB, bytes); default max_file_size in " + compiler.ConfigPath + ", else 5MiB", Destination: &o.maxSize},
		&cli.IntFlag{Name: "jobs", Aliases: []string{"j"}, Usage: "parse and index with `N` goroutines (0: one per CPU)", Destination: &o.jobs},
	}
}

// contextFilesFlag is --context-files, for the commands that list sources.
func contextFilesFlag() cli.Flag {
	return &cli.StringSliceFlag{Name: "context-files", Usage: "agent context file `NAMES` picked up outside .kb/; default context_files in " + compiler.ConfigPath + ", else " + strings.Join(knowledge.DefaultContextFiles, ",")}
}

// source is an opened build input.
type source struct {
	repo     *gitsource.Repo
	snapshot gitsource.Snapshot
	options  compiler.Options
	info     artifact.Source
}

// fromContext completes o with what only the parsed command line knows.
// Settings not given stay unset, so that the configuration's apply.
func (o *sourceOptions) fromContext(c *cli.Context) {
	if c.IsSet("context-files") {
		o.contextFiles = contextFilesOf(c)
	}
	o.revSet = c.IsSet("rev")
}

// contextFilesOf reads --context-files, given as repeated flags or a
// comma-separated list; an empty value means none.
func contextFilesOf(c *cli.Context) []string {
	names := []string{}
	for _, v := range c.StringSlice("context-files") {
		for n := range strings.SplitSeq(v, ",") {
			if n = strings.TrimSpace(n); n != "" {
				names = append(names, n)
			}
		}
	}
	return names
}

// openSource opens the repository containing dir and the snapshot o asks
// for. Without a choice, a local build reads the working tree, so that what
// kbq finds is what the files say; in CI (CI=true) it reads HEAD, so that
// the artifact is the commit's and reproducible. A bare repository has no
// working tree and is read at HEAD.
func openSource(s *cli.Streams, dir string, o *sourceOptions) (*source, error) {
	modes := 0
	for _, set := range []bool{o.revSet, o.staged, o.worktree} {
		if set {
			modes++
		}
	}
	if modes > 1 {
		return nil, cli.Usagef("--rev, --staged and --worktree choose one source; give only one")
	}
	if o.global && o.noGlobal {
		return nil, cli.Usagef("--global and --no-global contradict each other")
	}
	var maxSize int64
	if o.maxSize != "" {
		var err error
		if maxSize, err = compiler.ParseSize(o.maxSize); err != nil {
			return nil, cli.Usagef("--max-file-size: %v", err)
		}
	}
	repo, err := gitsource.Open(dir)
	if err != nil {
		return nil, err
	}
	src := &source{repo: repo}
	switch {
	case o.staged:
		src.snapshot, err = repo.Staged()
	case o.worktree, modes == 0 && !inCI(s) && repo.Root() != "":
		if o.once {
			src.snapshot, err = repo.WorktreeOnce()
		} else {
			src.snapshot, err = repo.Worktree()
		}
	default:
		rev := o.rev
		if rev == "" {
			rev = "HEAD"
		}
		src.snapshot, err = repo.RevOnce(rev)
	}
	if err != nil {
		return nil, err
	}
	info := src.snapshot.Info()
	src.info = artifact.Source{Mode: info.Mode, Rev: info.Rev, Commit: info.Commit, Tree: info.Tree, Shallow: info.Commit != "" && repo.Shallow()}
	// The configuration is read by whoever reads the files: a build reads
	// both once it holds the artifact's lock.
	src.options = compiler.Options{ContextFiles: o.contextFiles, MaxFileSize: maxSize, Workers: o.jobs}
	if includeGlobal(s, o) {
		if gdir := globalDir(s); gdir != "" {
			if fi, err := os.Stat(gdir); err == nil && fi.IsDir() {
				src.options.Global = &compiler.Global{Dir: gdir, Source: gitsource.Dir(gdir)}
			}
		}
	}
	return src, nil
}

// inCI reports whether kbc runs in continuous integration, where builds
// read commits and leave the home directory out.
func inCI(s *cli.Streams) bool {
	return strings.EqualFold(s.Getenv("CI"), "true")
}

// includeGlobal decides whether the global scope is compiled in: by flag,
// else not in CI (CI=true), so that CI artifacts never depend on a home
// directory, else yes.
func includeGlobal(s *cli.Streams, o *sourceOptions) bool {
	switch {
	case o.global:
		return true
	case o.noGlobal:
		return false
	}
	return !inCI(s)
}

// globalDir is $KBQ_HOME/knowledge, else $XDG_CONFIG_HOME/kbq/knowledge,
// else ~/.config/kbq/knowledge.
func globalDir(s *cli.Streams) string {
	return userdir.ConfigFile(s.Getenv, "knowledge")
}

const globalDirHelp = "$KBQ_HOME/knowledge, else\n$XDG_CONFIG_HOME/kbq/knowledge, else ~/.config/kbq/knowledge"

// builtAt is when the manifest says the artifact was built:
// SOURCE_DATE_EPOCH, else the time of the commit read (of HEAD for the
// index and working tree), so that a commit always builds the same bytes.
func (src *source) builtAt(s *cli.Streams) (time.Time, error) {
	if v := s.Getenv("SOURCE_DATE_EPOCH"); v != "" {
		secs, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return time.Time{}, cli.Usagef("SOURCE_DATE_EPOCH=%q is not a number of seconds", v)
		}
		return time.Unix(secs, 0).UTC(), nil
	}
	if src.info.Commit != "" {
		commit, err := src.repo.CommitTime(src.info.Commit)
		if err != nil {
			return time.Time{}, err
		}
		return commit.UTC(), nil
	}
	return time.Now().UTC().Truncate(time.Second), nil
}
