package compiler

import (
	"bytes"
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

// A publication is a build's hold on the artifact directory out: begun
// with the lock held, a fresh directory inside out to build the new index
// in, then committed or aborted. Committing makes the new index current:
// the index directory is renamed to the name its manifest gives, then the
// manifest replaces the old one with an atomic rename. Readers see the old
// artifact or the new one, never a mix; if the build fails, or the process
// dies, the old artifact stays as it was. One build at a time holds
// out/.lock.
//
// A source that can change (a working tree) must be read after the lock
// is held, or a build that waited for it could publish an older view of
// the tree over a newer one.
//
// No path a publication writes or removes is followed through a symbolic
// link: out, and every directory between root (the repository, when
// known) and out, must be real directories, and a link inside out is
// replaced or removed, never written through, so a repository that commits
// a link where the artifact goes cannot make kbc write or delete outside
// it.
type publication struct {
	out    string
	dir    string // the new index's directory, while it is being built
	unlock func()
	placed bool // dir was renamed into place, or kept
}

// beginPublish takes out's lock, waiting for another build to finish,
// removes what killed builds left, and makes the directory the new index
// is built in.
func beginPublish(out, root string) (_ *publication, err error) {
	if err := safefs.NoLinksBelow(root, out); err != nil {
		return nil, fmt.Errorf("%w: %w: kbc never writes through a link (remove it, or choose another directory with -o)", ErrOutput, err)
	}
	if fi, err := os.Stat(out); err == nil && !fi.IsDir() {
		return nil, fmt.Errorf("%w: %s is a file, not a directory (remove it, or choose another directory with -o)", ErrOutput, out)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, fmt.Errorf("%w: %w (choose another directory with -o)", ErrOutput, err)
	}
	if err := safefs.NoLinksBelow(root, out); err != nil { // made meanwhile
		return nil, fmt.Errorf("%w: %w: kbc never writes through a link (remove it, or choose another directory with -o)", ErrOutput, err)
	}
	if err := ensureGitignore(out); err != nil {
		return nil, fmt.Errorf("%w: %w (choose another directory with -o)", ErrOutput, err)
	}
	unlock, err := filelock.Wait(filepath.Join(out, lockFile), 5*time.Minute)
	if err != nil {
		return nil, fmt.Errorf("%w: %w (is another kbc build stuck?)", ErrOutput, err)
	}
	p := &publication{out: out, unlock: unlock}
	defer func() {
		if err != nil {
			p.abort()
		}
	}()
	removeStale(out, nil, time.Now())
	if p.dir, err = os.MkdirTemp(out, "tmp-index-"); err != nil {
		return nil, fmt.Errorf("%w: %w (choose another directory with -o)", ErrOutput, err)
	}
	return p, nil
}

// previous reads the artifact the publication replaces, when it checks
// out; otherwise it is nil, and why says why ("" when there is none).
func (p *publication) previous() (prev *previous, why string) {
	return loadPrevious(p.out)
}

// commit makes m current: the index built in p.dir takes its name (unless
// keep: the index in place already is m's), then the ages table and the
// manifest are written, and what replaced builds left is removed.
func (p *publication) commit(m *artifact.Manifest, keep bool) error {
	if err := p.writeDocuments(m, keep); err != nil {
		return fmt.Errorf("%w: %w", ErrOutput, err)
	}
	if !keep {
		if err := syncDir(p.dir); err != nil {
			return fmt.Errorf("%w: %w", ErrOutput, err)
		}
		if err := replaceDir(p.dir, filepath.Join(p.out, m.Index)); err != nil {
			return fmt.Errorf("%w: %w", ErrOutput, err)
		}
		p.placed = true
	}
	if err := writeAges(p.out, m); err != nil {
		return fmt.Errorf("%w: %w", ErrOutput, err)
	}
	markReplaced(p.out, m)
	if err := writeManifest(p.out, m); err != nil {
		return fmt.Errorf("%w: %w", ErrOutput, err)
	}
	removeStale(p.out, m, time.Now())
	return nil
}

// writeDocuments writes the document table of m into the new index's
// directory, or, when the index in place is kept, into that one unless it
// holds the same table already.
func (p *publication) writeDocuments(m *artifact.Manifest, keep bool) error {
	table := m.DocumentTable()
	fill := func(w io.Writer) error {
		_, err := w.Write(table)
		return err
	}
	if !keep {
		return writeFileSync(filepath.Join(p.dir, artifact.DocumentsFile), fill)
	}
	name := filepath.Join(p.out, m.Index, artifact.DocumentsFile)
	if old, err := os.ReadFile(name); err == nil && bytes.Equal(old, table) {
		return nil
	}
	return replaceFile(name, fill)
}

// abort removes the new index's directory unless commit placed it, and
// releases the lock. It may be called again, and after commit.
func (p *publication) abort() {
	if !p.placed && p.dir != "" {
		os.RemoveAll(p.dir)
	}
	p.dir = ""
	if p.unlock != nil {
		p.unlock()
		p.unlock = nil
	}
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

// markReplaced stamps the index directory and the ages table of the
// manifest about to be replaced with the time, unless m keeps them: a
// reader that opened that index finds its documents and ages there for as
// long as removeStale keeps them, keepFor from now.
func markReplaced(out string, m *artifact.Manifest) {
	old, err := artifact.ReadHeader(out)
	if err != nil {
		return
	}
	now := time.Now()
	if old.Ages != "" && old.Ages != m.Ages && filepath.Base(old.Ages) == old.Ages {
		os.Chtimes(filepath.Join(out, old.Ages), now, now)
	}
	if old.Index == m.Index {
		return
	}
	if dir, err := old.IndexDir(out); err == nil && safefs.NotLink(dir) == nil {
		os.Chtimes(dir, now, now)
	}
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
// replaced: markReplaced stamps it then. A reader that
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
