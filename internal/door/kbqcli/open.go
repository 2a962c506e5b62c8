package kbqcli

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/kbqdev/kbq/internal/cli"
	"github.com/kbqdev/kbq/internal/door/reader"
	"github.com/kbqdev/kbq/knowledge"
)

// open opens the artifacts src names; closeOpened says what a user should
// know of them on stderr, and closes them.
func open(s *cli.Streams, src *reader.Sources) (*reader.Opened, error) {
	return reader.Open(s.Getenv, src)
}

func closeOpened(s *cli.Streams, o *reader.Opened) {
	for _, n := range o.Notes() {
		fmt.Fprintf(s.Err, "kbq: note: %s\n", n)
	}
	closeAll := o.Close
	if s.Exits {
		closeAll = o.Exit
	}
	if err := closeAll(); err != nil {
		fmt.Fprintf(s.Err, "kbq: note: %v\n", err)
	}
}

// newUsage records use, with its one complaint on stderr.
func newUsage(s *cli.Streams) *reader.Usage {
	return reader.NewUsage(s.Getenv, func(msg string) { fmt.Fprintf(s.Err, "kbq: note: %s\n", msg) })
}

// repoDir turns --dir into the repository path queries take: a directory
// of the one repository read, so none when several are.
func repoDir(o *reader.Opened, dir, several string) (string, error) {
	if o.Named() && o.RepoRoot == "" {
		if dir != "" {
			return "", cli.Usagef("--dir names a directory of one repository; %s", several)
		}
		return "", nil
	}
	return reader.RepoDir(o.RepoRoot, dir)
}

// shownPaths are the paths of documents (repos[i], paths[i]) as a user
// opens them from here: relative to the current directory, as git prints
// them, in a repository on disk; REPO:PATH otherwise.
func shownPaths(o *reader.Opened, repos, paths []string) []string {
	if !o.Named() {
		return reader.HereRelative(o.RepoRoot, paths)
	}
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = repos[i] + ":" + p
		if root := o.Root(repos[i]); root != "" && !strings.HasPrefix(p, knowledge.GlobalPathPrefix) {
			out[i] = reader.HereOrAbsolute(filepath.Join(root, filepath.FromSlash(p)))
		}
	}
	return out
}

// optional is a list of s, empty when s is.
func optional(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}
