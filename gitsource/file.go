package gitsource

import (
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"iter"
	"strconv"
)

var (
	// ErrNotRepository means no git repository contains the given path.
	ErrNotRepository = errors.New("not a git repository")
	// ErrUnknownRevision means a revision does not name a commit.
	ErrUnknownRevision = errors.New("unknown revision")
	// ErrNoCommonAncestor means two commits share no history.
	ErrNoCommonAncestor = errors.New("no common ancestor")
	// ErrNoWorktree means the repository is bare, so it has no index or
	// working tree to read.
	ErrNoWorktree = errors.New("repository has no working tree")
	// ErrUnsupported means the repository uses a git feature that cannot be
	// read; the message names it.
	ErrUnsupported = errors.New("unsupported repository feature")
	// ErrTooLarge means a file is over the size cap passed to Read.
	ErrTooLarge = errors.New("file too large")
	// ErrDamaged means an object the source needs is missing from the
	// repository or cannot be decoded; the message names it and the path
	// that needs it.
	ErrDamaged = errors.New("damaged repository")
)

// Kind is what a tree entry is.
type Kind int

const (
	Regular    Kind = iota // a regular file
	Executable             // a regular file with the executable bit
	Symlink                // a symbolic link; never followed
	Submodule              // a gitlink to another repository; never entered
	Unmerged               // an index path with merge conflicts
)

func (k Kind) String() string {
	switch k {
	case Regular:
		return "file"
	case Executable:
		return "executable file"
	case Symlink:
		return "symlink"
	case Submodule:
		return "submodule"
	case Unmerged:
		return "unmerged path"
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// IsFile reports whether the entry's bytes can be read.
func (k Kind) IsFile() bool { return k == Regular || k == Executable }

// File is one entry of a snapshot.
type File struct {
	// Path is slash-separated and relative to the snapshot's root.
	Path string
	// Blob is the git blob hash of the content in hex, or "" when the snapshot
	// only learns it by reading the file (HashBlob computes it then).
	Blob string
	Kind Kind
	// Size and Mod (Unix nanoseconds) are what a directory snapshot saw on
	// disk when it listed the file, so that a later reader can tell whether
	// it changed since; zero in snapshots of git objects.
	Size int64
	Mod  int64
}

// DirStamp is a directory's modification time (Unix nanoseconds) as a
// directory snapshot saw it just before listing it: a file added or removed
// since changes it.
type DirStamp struct {
	Path string // slash-separated, relative to the snapshot's root; "" is the root
	Mod  int64
	// Digest is what the snapshot's DigestDirs function made of the
	// directory's entries as listed (in name order, before ignore rules):
	// what a later listing is compared with. 0 without one.
	Digest uint64
}

// Snapshot is a set of files at one moment: a commit's tree, git's index or
// a directory on disk.
type Snapshot interface {
	// Files yields every entry in path order. An error ends the sequence.
	Files() iter.Seq2[File, error]
	// Read returns f's content, or an error wrapping ErrTooLarge when it is
	// larger than max bytes.
	Read(f File, max int64) ([]byte, error)
	// Lookup returns the entry at path, without listing the others; ok is
	// false when there is none.
	Lookup(path string) (f File, ok bool, err error)
	// Info describes the snapshot.
	Info() Info
}

// Info describes where a snapshot's files come from.
type Info struct {
	Mode   string // "rev", "staged", "worktree" or "dir"
	Rev    string // the revision asked for, in rev mode
	Commit string // the commit read (rev) or HEAD (staged, worktree), if any
	Tree   string // the commit's tree, if any
}

// HashBlob returns the git blob hash of data.
func HashBlob(data []byte) string {
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00", len(data))
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil))
}

func tooLarge(path string, size, max int64) error {
	return fmt.Errorf("%s is %d bytes, over the %d byte cap: %w", path, size, max, ErrTooLarge)
}
