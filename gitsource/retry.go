package gitsource

import (
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// git gc, git repack and git prune move objects while a build reads them:
// loose objects into a new pack, old packs into a new one, and then delete
// what was moved. go-git lists a repository's packs once, so an object
// that moved after that looks missing. A read that finds its object
// missing makes go-git list the packs again and tries once more, a few
// times with short pauses while git finishes; an object missing after
// that is really missing.

const readAttempts = 4

// readObject runs read, which reads the object h needed by path, retrying
// as above. A final failure wraps ErrDamaged and names h and path.
func (r *Repo) readObject(h plumbing.Hash, what, path string, read func() error) error {
	var err error
	for attempt := range readAttempts {
		err = read()
		if err == nil || errors.Is(err, ErrTooLarge) {
			return err
		}
		if !moved(err) {
			return fmt.Errorf("%w: %s %s of %s cannot be read: %w (git fsck shows what is damaged)", ErrDamaged, what, h, path, err)
		}
		if attempt < readAttempts-1 {
			r.rescanPacks()
			time.Sleep(time.Duration(attempt) * 20 * time.Millisecond)
		}
	}
	return fmt.Errorf("%w: %s %s of %s is missing from the repository: %w (git fsck shows what is damaged; a fresh clone has it)", ErrDamaged, what, h, path, err)
}

// moved reports whether err may come from an object that moved: not found
// where go-git looked, or a pack file gone.
func moved(err error) bool {
	return errors.Is(err, plumbing.ErrObjectNotFound) || errors.Is(err, fs.ErrNotExist)
}

// rescanPacks makes go-git list the repository's packs again.
func (r *Repo) rescanPacks() {
	st, ok := r.git.Storer.(*filesystem.Storage)
	if !ok {
		return
	}
	r.objects.Lock()
	st.ObjectStorage.Reindex()
	r.objects.Unlock()
}

// locked runs f, which calls go-git, holding r.objects.
func (r *Repo) locked(f func() error) error {
	r.objects.Lock()
	defer r.objects.Unlock()
	return f()
}
