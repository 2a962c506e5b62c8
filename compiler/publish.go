package compiler

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/kbqdev/kbq/artifact"
	"github.com/kbqdev/kbq/internal/filelock"
	"github.com/kbqdev/kbq/internal/safefs"
)

// ErrOutput means the artifact directory cannot be written.
var ErrOutput = errors.New("cannot write the artifact")

const lockFile = ".lock"

// publish builds a new index in a fresh directory inside the artifact
// directory out, given the artifact already there when it checks out (or
// nil, and why not), and makes it current: the index directory is renamed
// to the name its manifest gives, then the manifest replaces the old one
// with an atomic rename. Readers see the old artifact or the new one, never
// a mix; if build fails, or the process dies, the old artifact stays as it
// was. build reports keep when the current index already is the new one.
// One build at a time holds out/.lock.
//
// locked runs as soon as the lock is held, before the previous artifact is
// read: a source that can change (a working tree) must be read after it, or
// a build that waited for the lock could publish an older view of the tree
// over a newer one.
//
// finish, when build returns one, is work build started beside the
// publishing (files of the artifact other than the index and manifest): it
// is waited for before the lock is released, and its error returned.
//
// No path publish writes or removes is followed through a symbolic link:
// out, and every directory between root (the repository, when known) and
// out, must be real directories, and a link inside out is replaced or
// removed, never written through, so a repository that commits a link
// where the artifact goes cannot make kbc write or delete outside it.
func publish(out, root string, locked func(), build func(dir string, prev *previous, why string) (m *artifact.Manifest, keep bool, finish func() error, err error)) (err error) {
	if err := safefs.NoLinksBelow(root, out); err != nil {
		return fmt.Errorf("%w: %w: kbc never writes through a link (remove it, or choose another directory with -o)", ErrOutput, err)
	}
	if fi, err := os.Stat(out); err == nil && !fi.IsDir() {
		return fmt.Errorf("%w: %s is a file, not a directory (remove it, or choose another directory with -o)", ErrOutput, out)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return fmt.Errorf("%w: %w (choose another directory with -o)", ErrOutput, err)
	}
	if err := safefs.NoLinksBelow(root, out); err != nil { // made meanwhile
		return fmt.Errorf("%w: %w: kbc never writes through a link (remove it, or choose another directory with -o)", ErrOutput, err)
	}
	if err := ensureGitignore(out); err != nil {
		return fmt.Errorf("%w: %w (choose another directory with -o)", ErrOutput, err)
	}
	unlock, err := filelock.Wait(filepath.Join(out, lockFile), 5*time.Minute)
	if err != nil {
		return fmt.Errorf("%w: %w (is another kbc build stuck?)", ErrOutput, err)
	}
	defer unlock()
	locked()
	removeStale(out, nil, time.Now())

	tmp, err := os.MkdirTemp(out, "tmp-index-")
	if err != nil {
		return fmt.Errorf("%w: %w (choose another directory with -o)", ErrOutput, err)
	}
	placed := false
	defer func() {
		if !placed {
			os.RemoveAll(tmp)
		}
	}()
	prev, why := loadPrevious(out)
	m, keep, finish, err := build(tmp, prev, why)
	if finish != nil {
		defer func() {
			if ferr := finish(); err == nil {
				err = ferr
			}
		}()
	}
	if err != nil {
		return err
	}
	if !keep {
		if err := syncDir(tmp); err != nil {
			return fmt.Errorf("%w: %w", ErrOutput, err)
		}
		if err := replaceDir(tmp, filepath.Join(out, m.Index)); err != nil {
			return fmt.Errorf("%w: %w", ErrOutput, err)
		}
		placed = true
	}
	if err := writeAges(out, m); err != nil {
		return fmt.Errorf("%w: %w", ErrOutput, err)
	}
	keepReplaced(out, m)
	if err := writeManifest(out, m); err != nil {
		return fmt.Errorf("%w: %w", ErrOutput, err)
	}
	removeStale(out, m, time.Now())
	return nil
}

// writeAges writes the ages table of m's documents beside the manifest,
// unless a build wrote the same one, and names it in m.
func writeAges(out string, m *artifact.Manifest) error {
	m.Ages = ""
	if !artifact.HasAges(m.Documents) {
		return nil
	}
	name, data := artifact.EncodeAges(m.Documents)
	m.Ages = name
	path := filepath.Join(out, name)
	if fi, err := os.Lstat(path); err == nil && fi.Mode().IsRegular() && fi.Size() == int64(len(data)) {
		return nil // named by its content
	}
	return replaceFile(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// keepReplaced links the manifest about to be replaced into the index
// directory it names, unless that index is current's: a reader that
// opened that index and reads its documents after the new manifest lands
// finds them there, for as long as removeStale keeps the directory.
func keepReplaced(out string, m *artifact.Manifest) {
	name := filepath.Join(out, artifact.ManifestFile)
	old, err := artifact.ReadHeader(out)
	if err != nil {
		return
	}
	if old.Ages != "" && old.Ages != m.Ages && filepath.Base(old.Ages) == old.Ages {
		// Kept as long as an index directory: from now.
		now := time.Now()
		os.Chtimes(filepath.Join(out, old.Ages), now, now)
	}
	if old.Index == m.Index {
		return
	}
	dir, err := old.IndexDir(out)
	if err != nil || safefs.NotLink(dir) != nil {
		return
	}
	kept := filepath.Join(dir, artifact.ManifestFile)
	if err := os.RemoveAll(kept); err != nil {
		return
	}
	os.Link(name, kept) // without it, a slow reader is told to run again
}

// Replaced index directories stay for readers that opened them: for
// keepFor after they were replaced, and the keepAtMost most recent.
const (
	keepFor    = 10 * time.Second
	keepAtMost = 4
)

// replaceDir renames the directory from to to. When to exists (an index of
// the same name that did not check out, or that --full rebuilt), the two
// are exchanged atomically where the system can, and the old one removed.
func replaceDir(from, to string) error {
	err := os.Rename(from, to)
	if err == nil {
		return nil
	}
	if _, serr := os.Lstat(to); serr != nil {
		return err
	}
	if err := exchangeDirs(from, to); err != nil {
		// Without an atomic exchange, move the old one aside first.
		aside := from + "-old"
		if err := os.Rename(to, aside); err != nil {
			return err
		}
		if err := os.Rename(from, to); err != nil {
			return err
		}
		return os.RemoveAll(aside)
	}
	return os.RemoveAll(from)
}

// writeManifest replaces out/manifest.json atomically.
func writeManifest(out string, m *artifact.Manifest) error {
	name := filepath.Join(out, artifact.ManifestFile)
	if err := replaceFile(name, func(w io.Writer) error { return artifact.Encode(w, m) }); err != nil {
		return err
	}
	return syncDir(out)
}

// replaceFile replaces name with what fill writes, synced: through name.tmp,
// which is removed first whatever it is (a file a killed build left, or a
// link), then renamed over name (which replaces a link, never follows it).
func replaceFile(name string, fill func(io.Writer) error) error {
	tmp := name + ".tmp"
	if err := os.RemoveAll(tmp); err != nil {
		return err
	}
	if err := writeFileSync(tmp, fill); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, name); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// removeStale deletes what earlier builds left behind: unfinished
// temporary directories (when current is nil), and index directories and
// ages tables other than current's, once replaced more than keepFor before now or beyond the
// keepAtMost most recent. A directory's modification time is when it was
// replaced: keepReplaced adds the manifest to it then. A reader that
// opened an old index keeps its open files; deleting them is harmless on
// POSIX systems and retried by the next build elsewhere.
func removeStale(out string, current *artifact.Manifest, now time.Time) {
	entries, err := os.ReadDir(out)
	if err != nil {
		return
	}
	type replaced struct {
		name string
		at   time.Time
	}
	old := map[string][]replaced{}
	for _, e := range entries {
		name := e.Name()
		switch {
		case strings.HasPrefix(name, "tmp-index-") && current == nil:
			os.RemoveAll(filepath.Join(out, name))
		case current == nil || name == current.Index || name == current.Ages:
		case strings.HasPrefix(name, "index-"), strings.HasPrefix(name, artifact.AgesPrefix):
			var at time.Time
			if fi, err := os.Lstat(filepath.Join(out, name)); err == nil && (fi.IsDir() || fi.Mode().IsRegular()) {
				at = fi.ModTime()
			}
			kind, _, _ := strings.Cut(name, "-")
			old[kind] = append(old[kind], replaced{name, at})
		}
	}
	for _, list := range old {
		slices.SortFunc(list, func(a, b replaced) int { return b.at.Compare(a.at) })
		for i, r := range list {
			if i >= keepAtMost || now.Sub(r.at) > keepFor || r.at.After(now.Add(time.Minute)) {
				os.RemoveAll(filepath.Join(out, r.name))
			}
		}
	}
}

// ensureGitignore keeps the artifact out of git. A link in its place is
// replaced, never written through.
func ensureGitignore(out string) error {
	name := filepath.Join(out, ".gitignore")
	if fi, err := os.Lstat(name); err == nil && fi.Mode().IsRegular() {
		return nil
	}
	return safefs.WriteFile(name, []byte("# kbq artifact: built by kbc, never committed\n*\n"), 0o644)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) {
		return err
	}
	return nil
}
