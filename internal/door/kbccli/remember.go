package kbccli

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/kbqdev/kbq/authoring"
	"github.com/kbqdev/kbq/compiler"
	"github.com/kbqdev/kbq/gitsource"
	"github.com/kbqdev/kbq/internal/cli"
	"github.com/kbqdev/kbq/knowledge"
)

type rememberOptions struct {
	dir       string
	source    string
	stage     bool
	noRefresh bool
}

const noRefreshUsage = "leave the artifact as it is (by default it is refreshed from the working tree, so that the next search sees the change)"

func newRememberCommand(s *cli.Streams, g *globalOptions) *cli.Command {
	o := &rememberOptions{}
	return &cli.Command{
		Name:      "remember",
		Usage:     "write a new memory",
		UsageText: `kbc remember "TEXT" [--tags a,b] [--dir D] [--source S] [--supersedes REF] [--contradicts REF] [--stage]` + "\n   echo TEXT | kbc remember - [...]",
		Description: `Writes D/.kb/memories/NNN-slug.md with the text and frontmatter: id (one
more than the largest id there, so hand-made files never collide), created
(now, RFC 3339 with zone), tags, and source (user-told unless --source).
Prints the new file's path, then refreshes the artifact (.kbq/) from the
working tree, incrementally, so that the next kbq search finds the memory.
The file is not committed: it shows up in the pull request for a person to
review. Without --dir the memory goes into the deepest
existing scope containing the current directory (the nearest .kb/ at or
above it, else the repository root's); --dir D names D's own scope and
creates D/.kb/ if needed. "-" reads the text from stdin. Concurrent remembers never share an id or a file, and a
failure leaves nothing behind.

EXAMPLES:
   kbc remember "The billing API rate-limits at 100 requests a second" --tags billing
   kbc remember --dir services/api "Health checks live at /healthz" --stage
   kbc remember "Deploys now go through Argo" --supersedes memory:12
   kbc remember "The nightly job runs at 03:00, not 02:00" --contradicts memory:7
   git log -1 --format=%B | kbc remember - --source extracted

` + exitCodesHelp,
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "tags", Usage: "tag the memory with `TAGS` (comma-separated or repeated)"},
			&cli.StringSliceFlag{Name: "supersedes", Usage: "retire what the memory replaces: `REF`, a topic key or memory:ID (comma-separated or repeated)"},
			&cli.StringSliceFlag{Name: "contradicts", Usage: "mark what the memory disputes: `REF`, a topic key or memory:ID; both stay searchable, marked disputed, until one is superseded"},
			&cli.StringFlag{Name: "dir", Complete: cli.Dirs, Usage: "write into `D`/.kb/memories (default: the deepest scope containing the current directory)", Destination: &o.dir},
			&cli.StringFlag{Name: "source", Usage: "record where the memory came from: `S` such as user-told or extracted", Destination: &o.source},
			&cli.BoolFlag{Name: "stage", Usage: "add the new file to git's index", Destination: &o.stage},
			&cli.BoolFlag{Name: "no-refresh", Usage: noRefreshUsage, Destination: &o.noRefresh},
		},
		Action: func(c *cli.Context) error { return runRemember(c, s, g, o) },
	}
}

func runRemember(c *cli.Context, s *cli.Streams, g *globalOptions, o *rememberOptions) error {
	if !c.Args().Present() {
		return cli.Usagef(`kbc remember needs the text to remember (or "-" to read it from stdin)`)
	}
	text := strings.Join(c.Args().Slice(), " ")
	if text == "-" {
		data, err := io.ReadAll(io.LimitReader(s.In, authoring.MaxMemoryBytes*2))
		if err != nil {
			return fmt.Errorf("read stdin: %w", err)
		}
		text = string(data)
	}
	repo, scope, err := openScopeDir(g, o.dir)
	if err != nil {
		return err
	}
	if err := authoring.Reachable(repoRoot(repo), scope, knowledge.MemoriesDir, repo.LeftOut); err != nil {
		return err
	}
	var tags []string
	for _, t := range c.StringSlice("tags") {
		tags = append(tags, strings.Split(t, ",")...)
	}
	refs := func(flag string) []string {
		var out []string
		for _, s := range c.StringSlice(flag) {
			for _, ref := range strings.Split(s, ",") {
				if ref = strings.TrimSpace(ref); ref != "" {
					out = append(out, ref)
				}
			}
		}
		return out
	}
	path, err := authoring.Remember(scope, text, authoring.MemoryOptions{Tags: tags, Source: o.source, LockDir: repo.GitDir(), Root: repoRoot(repo),
		Supersedes: refs("supersedes"), Contradicts: refs("contradicts")})
	if err != nil {
		return err
	}
	if o.stage {
		if err := repo.Stage(path); err != nil {
			return fmt.Errorf("%w (the memory is written at %s)", err, path)
		}
	}
	fmt.Fprintln(s.Out, displayRepoPath(repo.Root(), path))
	warnDuplicates(c.Context, s, repo, path)
	if !o.noRefresh {
		refreshArtifact(c.Context, s, repo)
	}
	return nil
}

// warnDuplicates says which memories and topics of its scope the knowledge
// just written at path (nearly) duplicates, as kbc check would: a memory
// of one line too.
func warnDuplicates(ctx context.Context, s *cli.Streams, repo *gitsource.Repo, path string) {
	rel, err := filepath.Rel(repo.Root(), path)
	if err != nil {
		return
	}
	src, err := openSource(s, repo.Root(), &sourceOptions{worktree: true, noGlobal: true})
	if err != nil {
		return
	}
	res, err := compiler.Check(ctx, src.snapshot, compiler.CheckOptions{Options: src.options, Paths: []string{filepath.ToSlash(rel)},
		DuplicateThreshold: compiler.DefaultDuplicateThreshold})
	if err != nil {
		return
	}
	for _, d := range res.Diagnostics {
		if strings.HasPrefix(d.Message, "nearly duplicates ") {
			fmt.Fprintf(s.Err, "kbc: warning: %s %s; kbc forget it if it says nothing new\n", displayRepoPath(repo.Root(), path), d.Message)
		}
	}
}

// openScopeDir opens the repository and resolves --dir: the directory whose
// .kb/ a memory goes into, which must be inside the working tree.
func openScopeDir(g *globalOptions, dir string) (*gitsource.Repo, string, error) {
	repo, err := gitsource.Open(g.workDir())
	if err != nil {
		return nil, "", err
	}
	if repo.Root() == "" {
		return nil, "", cli.Usagef("a bare repository has no working tree to write memories in")
	}
	root, err := filepath.EvalSymlinks(repo.Root())
	if err != nil {
		return nil, "", err
	}
	if dir == "" {
		wd, err := g.resolvedWorkDir()
		if err != nil {
			return nil, "", err
		}
		return repo, authoring.ScopeDir(root, wd), nil
	}
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(g.workDir(), dir)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, "", err
	}
	resolved, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, "", cli.Usagef("--dir %s: %v", dir, err)
	}
	rel, err := filepath.Rel(root, resolved)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return nil, "", cli.Usagef("--dir %s is outside the repository at %s", dir, repo.Root())
	}
	if fi, err := os.Stat(resolved); err != nil || !fi.IsDir() {
		return nil, "", cli.Usagef("--dir %s is not a directory", dir)
	}
	return repo, resolved, nil
}

func newForgetCommand(s *cli.Streams, g *globalOptions) *cli.Command {
	var (
		dir       string
		noRefresh bool
	)
	return &cli.Command{
		Name:      "forget",
		Usage:     "remove a memory",
		UsageText: "kbc forget ID|PATH [--dir D]",
		Description: `Removes a memory, by path (relative to the current directory) or by id,
and takes it out of git's index if it is there, so that the next commit
deletes it. Then refreshes the artifact from the working tree, so that the
next kbq search no longer finds it. An id is looked up in the deepest scope containing the current
directory (the nearest .kb/ at or above it), or in D/.kb/memories with
--dir D; an id only an enclosing scope has is refused, naming its file.
Refuses anything that is not in a .kb/memories/ directory.

` + exitCodesHelp + `
   (1 also when no memory has that id or path)`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "dir", Complete: cli.Dirs, Usage: "forget a memory of `D`/.kb/memories (default: the deepest scope containing the current directory)", Destination: &dir},
			&cli.BoolFlag{Name: "no-refresh", Usage: noRefreshUsage, Destination: &noRefresh},
		},
		Complete: func(args []string, partial string) []string {
			if len(args) > 0 {
				return nil
			}
			return memoriesHere(g, dir)
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return cli.Usagef("kbc forget takes one memory id or path")
			}
			repo, scope, err := openScopeDir(g, dir)
			if err != nil {
				return err
			}
			ref := c.Args().First()
			if !isNumber(ref) && !filepath.IsAbs(ref) {
				ref = filepath.Join(g.workDir(), ref)
			}
			root, err := filepath.EvalSymlinks(repo.Root())
			if err != nil {
				return err
			}
			path, err := authoring.Forget(root, scope, ref)
			if err != nil {
				return err
			}
			if tracked, err := repo.Tracked(path); err != nil {
				return err
			} else if tracked {
				if err := repo.Unstage(path); err != nil {
					return err
				}
			}
			fmt.Fprintf(s.Out, "%s\n", displayRepoPath(root, path))
			if !noRefresh {
				refreshArtifact(c.Context, s, repo)
			}
			return nil
		},
	}
}

// repoRoot is the working tree's root with symbolic links resolved, as
// scope directories are.
func repoRoot(repo *gitsource.Repo) string {
	if root, err := filepath.EvalSymlinks(repo.Root()); err == nil {
		return root
	}
	return repo.Root()
}

func isNumber(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// memoriesHere lists, for completion, the ids of the memories kbc forget
// would find here (or in dir's scope) and their paths.
func memoriesHere(g *globalOptions, dir string) []string {
	_, scope, err := openScopeDir(g, dir)
	if err != nil {
		return nil
	}
	entries, err := os.ReadDir(filepath.Join(scope, knowledge.Dir, knowledge.MemoriesDir))
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		name := e.Name()
		id, _, ok := strings.Cut(name, "-")
		if e.IsDir() || !ok || !isNumber(id) || !strings.HasSuffix(name, ".md") {
			continue
		}
		out = append(out, strings.TrimLeft(id, "0"))
	}
	return out
}
