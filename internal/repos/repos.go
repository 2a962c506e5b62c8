// Package repos keeps the user's list of repositories that kbq searches
// together (kbq repos add, rm and list; kbq search --all-repos): a YAML
// file, $KBQ_HOME/repos.yaml, else $XDG_CONFIG_HOME/kbq/repos.yaml, else
// ~/.config/kbq/repos.yaml.
//
//	repos:
//	  - name: github.com/org/api
//	    path: /home/me/src/api
//
// A repository's artifact is .kbq/ at its root, as kbc builds it.
package repos

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/kbqdev/kbq/internal/safefs"
	"github.com/kbqdev/kbq/internal/userdir"
)

// A Repo is a repository kbq searches.
type Repo struct {
	Name string `yaml:"name"`
	Path string `yaml:"path"` // its working tree's root, absolute
}

// List is the user's repositories, in the order they were added.
type List struct {
	Repos []Repo `yaml:"repos"`
	file  string
}

// File returns where the list is kept, from the environment getenv reads.
func File(getenv func(string) string) string {
	return userdir.ConfigFile(getenv, "repos.yaml")
}

// Load reads the list; a missing file is an empty list.
func Load(getenv func(string) string) (*List, error) {
	l := &List{file: File(getenv)}
	if l.file == "" {
		return nil, errors.New("no home directory to keep the list of repositories in: set KBQ_HOME")
	}
	data, err := os.ReadFile(l.file)
	if errors.Is(err, os.ErrNotExist) {
		return l, nil
	}
	if err != nil {
		return nil, err
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(l); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: %v (it holds repos:, a list of name: and path:)", l.file, err)
	}
	for i, r := range l.Repos {
		if r.Name == "" || !filepath.IsAbs(r.Path) {
			return nil, fmt.Errorf("%s: repository %d needs a name and an absolute path", l.file, i+1)
		}
	}
	return l, nil
}

// Find returns the repository named name.
func (l *List) Find(name string) (Repo, bool) {
	i := slices.IndexFunc(l.Repos, func(r Repo) bool { return r.Name == name })
	if i < 0 {
		return Repo{}, false
	}
	return l.Repos[i], true
}

// Add adds r; a name or path already listed is an error.
func (l *List) Add(r Repo) error {
	for _, o := range l.Repos {
		switch {
		case o.Name == r.Name:
			return fmt.Errorf("%s is already listed, for %s (kbq repos rm it first, or give another --name)", r.Name, o.Path)
		case o.Path == r.Path:
			return fmt.Errorf("%s is already listed, as %s", r.Path, o.Name)
		}
	}
	l.Repos = append(l.Repos, r)
	return nil
}

// Remove removes the repository named name or kept at that path.
func (l *List) Remove(name string) (Repo, error) {
	i := slices.IndexFunc(l.Repos, func(r Repo) bool { return r.Name == name || r.Path == name })
	if i < 0 {
		return Repo{}, NotListed(l, name)
	}
	r := l.Repos[i]
	l.Repos = slices.Delete(l.Repos, i, i+1)
	return r, nil
}

// NotListed is the error for name, as typed, naming no repository of l.
func NotListed(l *List, name string) error {
	var names []string
	for _, r := range l.Repos {
		names = append(names, r.Name)
	}
	if len(names) == 0 {
		return fmt.Errorf("no repository is listed")
	}
	return fmt.Errorf("no repository is named %+q, nor kept there; listed: %s", name, strings.Join(names, ", "))
}

// Save writes the list, replacing the file whole.
func (l *List) Save() error {
	data, err := yaml.Marshal(l)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(l.file), 0o755); err != nil {
		return err
	}
	tmp := l.file + ".tmp"
	if err := safefs.WriteFile(tmp, append([]byte("# kbq's repositories: kbq repos add, rm and list\n"), data...), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, l.file)
}
