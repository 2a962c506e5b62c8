package gitsource

import (
	"errors"
	"fmt"
	"io"
	"iter"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// Rev returns the committed tree of rev (a branch, tag, commit hash or
// expression such as HEAD~2).
func (r *Repo) Rev(rev string) (Snapshot, error) {
	return r.rev(rev, false)
}

// RevOnce is Rev for a snapshot listed once, as a build of a commit
// lists its source: the decoded index that lists it is forgotten after,
// rather than kept for the next listing (a build of 92,640 files held 20
// MB of it to its end, which its collector scanned again and again).
func (r *Repo) RevOnce(rev string) (Snapshot, error) {
	return r.rev(rev, true)
}

func (r *Repo) rev(rev string, once bool) (Snapshot, error) {
	commit, err := r.commit(rev)
	if err != nil {
		return nil, err
	}
	var tree *object.Tree
	err = r.readObject(commit.TreeHash, "tree", "commit "+commit.Hash.String(), func() error {
		return r.locked(func() (err error) {
			tree, err = commit.Tree()
			return err
		})
	})
	if err != nil {
		return nil, err
	}
	return &revSnapshot{repo: r, tree: tree, once: once, info: Info{
		Mode: "rev", Rev: rev, Commit: commit.Hash.String(), Tree: tree.Hash.String(),
	}}, nil
}

// MergeBase returns the best common ancestor of revisions a and b, as git
// merge-base does (the first when there are several).
func (r *Repo) MergeBase(a, b string) (string, error) {
	ca, err := r.commit(a)
	if err != nil {
		return "", err
	}
	cb, err := r.commit(b)
	if err != nil {
		return "", err
	}
	// One an ancestor of the other is the base: found without walking
	// the whole history, which a shallow clone does not hold.
	for _, pair := range [][2]*object.Commit{{ca, cb}, {cb, ca}} {
		var ok bool
		if r.locked(func() (err error) { ok, err = pair[0].IsAncestor(pair[1]); return err }) == nil && ok {
			return pair[0].Hash.String(), nil
		}
	}
	var bases []*object.Commit
	err = r.locked(func() (err error) {
		bases, err = ca.MergeBase(cb)
		return err
	})
	if err != nil {
		return "", fmt.Errorf("merge base of %s and %s: %w%s", a, b, err, r.ShallowHint())
	}
	if len(bases) == 0 {
		return "", fmt.Errorf("%s and %s have %w: name both sides (kbc diff %s %s)%s", a, b, ErrNoCommonAncestor, a, b, r.ShallowHint())
	}
	return bases[0].Hash.String(), nil
}

func (r *Repo) commit(rev string) (*object.Commit, error) {
	asked := rev
	rev, err := r.checkRevision(rev)
	if err != nil {
		return nil, err
	}
	h, err := r.git.ResolveRevision(plumbing.Revision(rev))
	if err != nil {
		if rev == "HEAD" {
			if _, herr := r.git.Head(); errors.Is(herr, plumbing.ErrReferenceNotFound) {
				return nil, fmt.Errorf("HEAD: %w: the repository has no commits yet (commit first, or build with --staged or --worktree)", ErrUnknownRevision)
			}
		}
		// A name that resolves to a hash whose object cannot be read is a
		// damaged repository, not an unknown revision.
		if target := r.refTarget(rev); !target.IsZero() {
			if _, oerr := r.objectOf(target, rev); oerr != nil {
				return nil, oerr
			}
		}
		return nil, fmt.Errorf("%q: %w (give a branch, tag or commit that exists: git log --oneline shows them)%s", asked, ErrUnknownRevision, r.ShallowHint())
	}
	obj, err := r.objectOf(*h, rev)
	if err != nil {
		return nil, err
	}
	if obj.Type() != plumbing.CommitObject {
		return nil, fmt.Errorf("%q names %s, which is a %s, not a commit: %w", asked, h, obj.Type(), ErrUnknownRevision)
	}
	commit, err := object.DecodeCommit(r.git.Storer, obj)
	if err != nil {
		return nil, fmt.Errorf("%w: commit %s (%s) cannot be decoded: %w (git fsck shows what is damaged)", ErrDamaged, h, rev, err)
	}
	return commit, nil
}

// objectOf reads the object h that rev names.
func (r *Repo) objectOf(h plumbing.Hash, rev string) (plumbing.EncodedObject, error) {
	var obj plumbing.EncodedObject
	err := r.readObject(h, "commit", rev, func() error {
		return r.locked(func() (err error) {
			obj, err = r.git.Storer.EncodedObject(plumbing.AnyObject, h)
			return err
		})
	})
	return obj, err
}

// refTarget returns the hash rev names as a reference or a full hash,
// without reading any object, or the zero hash.
func (r *Repo) refTarget(rev string) plumbing.Hash {
	if plumbing.IsHash(rev) {
		return plumbing.NewHash(rev)
	}
	for _, name := range []string{rev, "refs/" + rev, "refs/heads/" + rev, "refs/tags/" + rev, "refs/remotes/" + rev} {
		if ref, err := r.git.Reference(plumbing.ReferenceName(name), true); err == nil {
			return ref.Hash()
		}
	}
	return plumbing.ZeroHash
}

type revSnapshot struct {
	repo  *Repo
	tree  *object.Tree
	info  Info
	once  bool // RevOnce's
	files int  // how many files the index listed, when it did
}

func (s *revSnapshot) Info() Info { return s.info }

// SizeHint is how many files Files yields, once it has yielded one, when
// the index listed them; 0 when the tree objects are walked.
func (s *revSnapshot) SizeHint() int { return s.files }

// Files lists the tree from git's index when the index vouches for it,
// holding nothing once done (of RevOnce, the decoded index is forgotten
// too); else it walks the tree objects.
func (s *revSnapshot) Files() iter.Seq2[File, error] {
	return func(yield func(File, error) bool) {
		if idx := s.repo.treeFromIndex(s.tree.Hash); idx != nil {
			if s.once {
				defer s.repo.index.forget()
			}
			s.files = len(idx.Entries)
			for _, e := range idx.Entries {
				kind, _ := kindOfMode(e.Mode) // checked by treeFromIndex
				if !yield(File{Path: e.Name, Blob: e.Hash.String(), Kind: kind}, nil) {
					return
				}
			}
			return
		}
		s.walk(s.tree, "", yield)
	}
}

// walk yields the entries of tree, descending into subtrees. It returns false
// when yield asked to stop or an error ended the walk.
func (s *revSnapshot) walk(tree *object.Tree, prefix string, yield func(File, error) bool) bool {
	for _, e := range tree.Entries {
		path := prefix + e.Name
		var kind Kind
		switch e.Mode {
		case filemode.Dir:
			var sub *object.Tree
			err := s.repo.readObject(e.Hash, "tree", path, func() error {
				return s.repo.locked(func() (err error) {
					sub, err = object.GetTree(s.repo.git.Storer, e.Hash)
					return err
				})
			})
			if err != nil {
				yield(File{}, err)
				return false
			}
			if !s.walk(sub, path+"/", yield) {
				return false
			}
			continue
		case filemode.Regular, filemode.Deprecated:
			kind = Regular
		case filemode.Executable:
			kind = Executable
		case filemode.Symlink:
			kind = Symlink
		case filemode.Submodule:
			kind = Submodule
		default:
			yield(File{}, fmt.Errorf("%s: unknown tree entry mode %v", path, e.Mode))
			return false
		}
		if !yield(File{Path: path, Blob: e.Hash.String(), Kind: kind}, nil) {
			return false
		}
	}
	return true
}

func (s *revSnapshot) Read(f File, max int64) ([]byte, error) {
	return s.repo.readBlob(f, max)
}

type objectSizer interface {
	EncodedObjectSize(plumbing.Hash) (int64, error)
}

// readBlob reads a blob from the object store, checking its size first.
func (r *Repo) readBlob(f File, max int64) ([]byte, error) {
	h := plumbing.NewHash(f.Blob)
	var data []byte
	err := r.readObject(h, "blob", f.Path, func() error {
		var err error
		data, err = r.readBlobOnce(h, f.Path, max)
		return err
	})
	return data, err
}

func (r *Repo) readBlobOnce(h plumbing.Hash, path string, max int64) (data []byte, err error) {
	if data, ok, err := r.readLoose(h, path, max); ok {
		return data, err
	}
	err = r.locked(func() error {
		data, err = r.readPacked(h, path, max)
		return err
	})
	return data, err
}

// readPacked reads a blob through go-git: from a pack, or a loose object
// that appeared since readLoose looked.
func (r *Repo) readPacked(h plumbing.Hash, path string, max int64) ([]byte, error) {
	if sizer, ok := r.git.Storer.(objectSizer); ok {
		size, err := sizer.EncodedObjectSize(h)
		if err != nil {
			return nil, err
		}
		if size > max {
			return nil, tooLarge(path, size, max)
		}
	}
	blob, err := r.git.BlobObject(h)
	if err != nil {
		return nil, err
	}
	if blob.Size > max {
		return nil, tooLarge(path, blob.Size, max)
	}
	rd, err := blob.Reader()
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	return readAllInto(make([]byte, 0, blob.Size), rd)
}

func readAllInto(b []byte, r io.Reader) ([]byte, error) {
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
	}
}

// IsAncestor reports whether commit a is an ancestor of commit b, or b
// itself. It fails when the repository does not hold either (a shallow
// clone, for one).
func (r *Repo) IsAncestor(a, b string) (bool, error) {
	if a == b {
		return true, nil
	}
	ca, err := r.commit(a)
	if err != nil {
		return false, err
	}
	cb, err := r.commit(b)
	if err != nil {
		return false, err
	}
	var ok bool
	err = r.locked(func() (err error) {
		ok, err = ca.IsAncestor(cb)
		return err
	})
	if err != nil && r.Shallow() {
		err = fmt.Errorf("%w%s", err, r.ShallowHint())
	}
	return ok, err
}

// Unrelated reports whether commit a belongs to another history than
// commit b: the repository has no commit a, or the two have no common
// ancestor. In a shallow clone, which may lack a, a missing commit is
// not taken as unrelated.
func (r *Repo) Unrelated(a, b string) bool {
	h := plumbing.NewHash(a)
	if !plumbing.IsHash(a) {
		return false
	}
	if _, err := r.objectOf(h, a); err != nil {
		return !r.Shallow()
	}
	_, err := r.MergeBase(a, b)
	return errors.Is(err, ErrNoCommonAncestor)
}
