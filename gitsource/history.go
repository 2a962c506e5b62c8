package gitsource

import (
	"iter"
	"path"
	"time"

	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// Commit is one commit of a first-parent history and the paths it changed
// from its first parent.
type Commit struct {
	Hash    string
	Time    time.Time // the committer's: when the change landed
	Author  string
	Subject string
	// Changed lists the files the commit added, modified or deleted,
	// in tree order; Added and Deleted mark those it created and removed.
	Changed []string
	Added   map[string]bool
	Deleted map[string]bool
	// Boundary marks the last commit of a shallow clone's history: its
	// parents are not in the repository, and Changed holds every file.
	Boundary bool
}

// History yields the first-parent history of rev, newest first, each
// commit with the files it changed. A change a merged branch brings in is
// the merge commit's: that is when it reached rev's line. In a shallow
// clone the history ends at the clone's boundary, whose commit is read as
// a root: it added every file it holds (Commit.Boundary).
func (r *Repo) History(rev string) iter.Seq2[Commit, error] {
	return func(yield func(Commit, error) bool) {
		c, err := r.commit(rev)
		if err != nil {
			yield(Commit{}, err)
			return
		}
		shallow := r.shallowCommits()
		for c != nil {
			boundary := shallow[c.Hash.String()]
			var tree, parentTree *object.Tree
			var parent *object.Commit
			err := r.locked(func() (err error) {
				if tree, err = c.Tree(); err != nil {
					return err
				}
				if c.NumParents() == 0 || boundary {
					return nil
				}
				if parent, err = c.Parent(0); err != nil {
					return err
				}
				parentTree, err = parent.Tree()
				return err
			})
			if err != nil {
				yield(Commit{}, err)
				return
			}
			out := Commit{Hash: c.Hash.String(), Time: c.Committer.When, Author: c.Author.Name, Subject: subject(c.Message), Added: map[string]bool{}, Deleted: map[string]bool{}, Boundary: boundary}
			if err := r.locked(func() error { return diffTrees(parentTree, tree, "", &out) }); err != nil {
				yield(Commit{}, err)
				return
			}
			if !yield(out, nil) {
				return
			}
			c = parent
		}
	}
}

func subject(message string) string {
	for i := 0; i < len(message); i++ {
		if message[i] == '\n' {
			return message[:i]
		}
	}
	return message
}

// diffTrees adds to c the files that differ between trees a and b (either
// nil for empty), skipping subtrees whose hashes agree.
func diffTrees(a, b *object.Tree, prefix string, c *Commit) error {
	entries := func(t *object.Tree) map[string]object.TreeEntry {
		m := make(map[string]object.TreeEntry)
		if t != nil {
			for _, e := range t.Entries {
				m[e.Name] = e
			}
		}
		return m
	}
	before, after := entries(a), entries(b)
	var names []string
	if b != nil {
		for _, e := range b.Entries {
			names = append(names, e.Name)
		}
	}
	if a != nil {
		for _, e := range a.Entries {
			if _, ok := after[e.Name]; !ok {
				names = append(names, e.Name)
			}
		}
	}
	for _, name := range names {
		old, hadOld := before[name]
		cur, hasCur := after[name]
		if hadOld && hasCur && old.Hash == cur.Hash && old.Mode == cur.Mode {
			continue
		}
		p := path.Join(prefix, name)
		oldTree, curTree := hadOld && old.Mode == filemode.Dir, hasCur && cur.Mode == filemode.Dir
		if oldTree || curTree {
			var sa, sb *object.Tree
			var err error
			if oldTree {
				if sa, err = a.Tree(name); err != nil {
					return err
				}
			}
			if curTree {
				if sb, err = b.Tree(name); err != nil {
					return err
				}
			}
			if err := diffTrees(sa, sb, p, c); err != nil {
				return err
			}
		}
		if (hadOld && !oldTree) || (hasCur && !curTree) {
			c.Changed = append(c.Changed, p)
			switch {
			case !hasCur || curTree:
				c.Deleted[p] = true
			case !hadOld || oldTree:
				c.Added[p] = true
			}
		}
	}
	return nil
}
