package kbqcli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/kbqdev/kbq/artifact"
	"github.com/kbqdev/kbq/internal/cli"
	"github.com/kbqdev/kbq/internal/door/reader"
	"github.com/kbqdev/kbq/internal/door/render"
	"github.com/kbqdev/kbq/internal/gitdir"
	"github.com/kbqdev/kbq/internal/reponame"
	"github.com/kbqdev/kbq/internal/repos"
	"github.com/kbqdev/kbq/internal/visible"
)

func newReposCommand(s *cli.Streams) *cli.Command {
	var name string
	var asJSON bool
	return &cli.Command{
		Name:  "repos",
		Usage: "list the repositories searched together",
		Description: `kbq search, get and list read several repositories as one with --repo
NAME (repeatable) or --all-repos: results are ranked as if one artifact
had been built from all of them, and each says which repository it is
from. The repositories are listed in ` + "$KBQ_HOME/repos.yaml, else\n$XDG_CONFIG_HOME/kbq/repos.yaml, else ~/.config/kbq/repos.yaml" + `; each
one's artifact is .kbq/ at its root, as kbc build makes it.

   kbq repos add ~/src/api          named by its origin remote (github.com/org/api)
   kbq repos add --name web ../web
   kbq search --all-repos "rotate the signing key"
   kbq search --all-repos "rotate the signing key repo:web"
   kbq repos rm web

--index DIR given more than once reads those artifacts together too,
without the list; --index NAME=DIR names one.`,
		Commands: []*cli.Command{
			{
				Name:      "add",
				Usage:     "add a repository",
				UsageText: "kbq repos add [--name NAME] [PATH]",
				Flags:     []cli.Flag{&cli.StringFlag{Name: "name", Usage: "call it `NAME` (default: its origin remote as host/path, else its directory)", Destination: &name}},
				Action: func(c *cli.Context) error {
					if len(c.Args()) > 1 {
						return cli.Usagef("kbq repos add takes one PATH")
					}
					return reposAdd(s, c.Args().First(), name)
				},
			},
			{
				Name:      "rm",
				Aliases:   []string{"remove"},
				Usage:     "remove a repository from the list",
				UsageText: "kbq repos rm NAME|PATH",
				Action: func(c *cli.Context) error {
					if len(c.Args()) != 1 {
						return cli.Usagef("kbq repos rm takes the NAME or PATH of one repository")
					}
					return reposRemove(s, c.Args().First())
				},
			},
			{
				Name:      "list",
				Aliases:   []string{"ls"},
				Usage:     "list the repositories and the state of their artifacts",
				UsageText: "kbq repos list [--json]",
				Flags:     []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print JSON", Destination: &asJSON}},
				Action: func(c *cli.Context) error {
					if c.Args().Present() {
						return cli.Usagef("kbq repos list takes no arguments")
					}
					return reposList(s, asJSON)
				},
			},
		},
	}
}

func reposAdd(s *cli.Streams, path, name string) error {
	if path == "" {
		path = "."
	}
	d, err := gitdir.Find(path)
	if err != nil || d.Worktree == "" {
		return cli.Usagef("%s is not in a git repository with a working tree: give the path of one", path)
	}
	named := name != ""
	if !named {
		name = reader.RepoNameOf(d.Worktree)
	}
	if err := reponame.Check(name); err != nil {
		if named {
			return cli.Usagef("--name: %v", err)
		}
		return cli.Usagef("%v (from the origin remote or the directory): give --name", err)
	}
	list, err := repos.Load(s.Getenv)
	if err != nil {
		return err
	}
	if err := list.Add(repos.Repo{Name: name, Path: d.Worktree}); err != nil {
		return cli.Usagef("%v", err)
	}
	if err := list.Save(); err != nil {
		return err
	}
	fmt.Fprintf(s.Out, "kbq: added %s (%s)\n", name, d.Worktree)
	if _, err := os.Stat(filepath.Join(d.Worktree, artifact.DefaultDir, artifact.ManifestFile)); err != nil {
		fmt.Fprintf(s.Err, "kbq: %s has no artifact yet: run kbc build there\n", name)
	}
	return nil
}

func reposRemove(s *cli.Streams, name string) error {
	list, err := repos.Load(s.Getenv)
	if err != nil {
		return err
	}
	key := name
	if abs, err := filepath.Abs(name); err == nil && strings.ContainsAny(name, `/\.`) {
		if _, found := list.Find(name); !found {
			key = abs
		}
	}
	r, err := list.Remove(key)
	if err != nil {
		return cli.Usagef("%v", repos.NotListed(list, name))
	}
	if err := list.Save(); err != nil {
		return err
	}
	fmt.Fprintf(s.Out, "kbq: removed %s (%s)\n", r.Name, r.Path)
	return nil
}

// repoState is a listed repository and its artifact.
type repoState struct {
	Name     string `json:"name"`
	Path     string `json:"path"`
	Artifact string `json:"artifact"` // built, missing or unreadable
	BuiltAt  string `json:"built_at,omitempty"`
	Error    string `json:"error,omitempty"`
}

func reposList(s *cli.Streams, asJSON bool) error {
	list, err := repos.Load(s.Getenv)
	if err != nil {
		return err
	}
	states := []repoState{}
	for _, r := range list.Repos {
		st := repoState{Name: r.Name, Path: r.Path, Artifact: "built"}
		m, err := artifact.ReadHeader(filepath.Join(r.Path, artifact.DefaultDir))
		switch {
		case err == nil:
			st.BuiltAt = m.BuiltAt.UTC().Format(time.RFC3339)
		case os.IsNotExist(err) || strings.Contains(err.Error(), artifact.ErrNoArtifact.Error()):
			st.Artifact = "missing"
		default:
			st.Artifact, st.Error = "unreadable", err.Error()
		}
		states = append(states, st)
	}
	if asJSON {
		return render.JSON(s.Out, states)
	}
	if len(states) == 0 {
		fmt.Fprintf(s.Err, "kbq: no repositories are listed in %s: add one with kbq repos add PATH\n", repos.File(s.Getenv))
		return nil
	}
	tw := tabwriter.NewWriter(s.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tARTIFACT\tPATH")
	for _, st := range states {
		state := st.Artifact
		if st.BuiltAt != "" {
			state = "built " + st.BuiltAt[:len("2006-01-02")]
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", visible.Line(st.Name), state, visible.Line(st.Path))
	}
	return tw.Flush()
}
