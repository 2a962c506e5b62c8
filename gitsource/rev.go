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
	commit, err := r.commit(rev)
	if err != nil {
		return nil, err
	}
	tree, err := commit.Tree()
	if err != nil {
		return nil, fmt.Errorf("read tree of %s: %w", commit.Hash, err)
	}
	return &revSnapshot{repo: r, tree: tree, info: Info{
		Mode: "rev", Rev: rev, Commit: commit.Hash.String(), Tree: tree.Hash.String(),
	}}, nil
}

func (r *Repo) commit(rev string) (*object.Commit, error) {
	h, err := r.git.ResolveRevision(plumbing.Revision(rev))
	if err != nil {
		if rev == "HEAD" {
			if _, herr := r.git.Head(); errors.Is(herr, plumbing.ErrReferenceNotFound) {
				return nil, fmt.Errorf("HEAD: %w: the repository has no commits yet (commit first, or build with --staged or --worktree)", ErrUnknownRevision)
			}
		}
		return nil, fmt.Errorf("%q: %w (give a branch, tag or commit that exists: git log --oneline shows them)", rev, ErrUnknownRevision)
	}
	commit, err := r.git.CommitObject(*h)
	if err != nil {
		return nil, fmt.Errorf("%q names %s, which is not a commit: %w", rev, h, ErrUnknownRevision)
	}
	return commit, nil
}

type revSnapshot struct {
	repo *Repo
	tree *object.Tree
	info Info
}

func (s *revSnapshot) Info() Info { return s.info }

func (s *revSnapshot) Files() iter.Seq2[File, error] {
	return func(yield func(File, error) bool) {
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
			sub, err := object.GetTree(s.repo.git.Storer, e.Hash)
			if err != nil {
				yield(File{}, fmt.Errorf("read tree %s of %s: %w", e.Hash, path, err))
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
	if data, ok, err := r.readLoose(h, f.Path, max); ok {
		return data, err
	}
	if sizer, ok := r.git.Storer.(objectSizer); ok {
		size, err := sizer.EncodedObjectSize(h)
		if err != nil {
			return nil, fmt.Errorf("read blob %s of %s: %w", f.Blob, f.Path, err)
		}
		if size > max {
			return nil, tooLarge(f.Path, size, max)
		}
	}
	blob, err := r.git.BlobObject(h)
	if err != nil {
		return nil, fmt.Errorf("read blob %s of %s: %w", f.Blob, f.Path, err)
	}
	if blob.Size > max {
		return nil, tooLarge(f.Path, blob.Size, max)
	}
	rd, err := blob.Reader()
	if err != nil {
		return nil, fmt.Errorf("read blob %s of %s: %w", f.Blob, f.Path, err)
	}
	defer rd.Close()
	data := make([]byte, 0, blob.Size)
	data, err = readAllInto(data, rd)
	if err != nil {
		return nil, fmt.Errorf("read blob %s of %s: %w", f.Blob, f.Path, err)
	}
	return data, nil
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
