package compiler

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/kbqdev/kbq/artifact"
)

// ErrOutput means the artifact directory cannot be written.
var ErrOutput = errors.New("cannot write the artifact")

const lockFile = ".lock"

// publish builds a new index in a fresh directory inside the artifact
// directory out, given the artifact already there if it can be updated, and
// makes it current: the index directory is renamed to the
// name its manifest gives, then the manifest replaces the old one with an
// atomic rename. Readers see the old artifact or the new one, never a mix;
// if build fails, or the process dies, the old artifact stays as it was.
// One build at a time holds out/.lock.
func publish(out string, build func(dir string, prev *previous) (*artifact.Manifest, error)) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return fmt.Errorf("%w: %v (choose another directory with -o)", ErrOutput, err)
	}
	if err := ensureGitignore(out); err != nil {
		return fmt.Errorf("%w: %v (choose another directory with -o)", ErrOutput, err)
	}
	unlock, err := waitLock(filepath.Join(out, lockFile), 5*time.Minute)
	if err != nil {
		return fmt.Errorf("%w: %v (is another kbc build stuck?)", ErrOutput, err)
	}
	defer unlock()
	removeStale(out, "")

	tmp, err := os.MkdirTemp(out, "tmp-index-")
	if err != nil {
		return fmt.Errorf("%w: %v (choose another directory with -o)", ErrOutput, err)
	}
	keep := false
	defer func() {
		if !keep {
			os.RemoveAll(tmp)
		}
	}()
	m, err := build(tmp, loadPrevious(out))
	if err != nil {
		return err
	}
	final := filepath.Join(out, m.Index)
	if prev, err := artifact.ReadHeader(out); err == nil && prev.Index == m.Index {
		// The current index already holds these documents; keep it.
	} else {
		if err := os.RemoveAll(final); err != nil {
			return fmt.Errorf("%w: %v", ErrOutput, err)
		}
		if err := syncDir(tmp); err != nil {
			return fmt.Errorf("%w: %v", ErrOutput, err)
		}
		if err := os.Rename(tmp, final); err != nil {
			return fmt.Errorf("%w: %v", ErrOutput, err)
		}
		keep = true
	}
	if err := writeManifest(out, m); err != nil {
		return fmt.Errorf("%w: %v", ErrOutput, err)
	}
	removeStale(out, m.Index)
	return nil
}

// writeManifest replaces out/manifest.json atomically.
func writeManifest(out string, m *artifact.Manifest) error {
	name := filepath.Join(out, artifact.ManifestFile)
	tmp := name + ".tmp"
	os.Remove(tmp)
	if err := writeFileSync(tmp, func(w io.Writer) error { return artifact.Encode(w, m) }); err != nil {
		return err
	}
	if err := os.Rename(tmp, name); err != nil {
		os.Remove(tmp)
		return err
	}
	return syncDir(out)
}

// removeStale deletes what earlier builds left behind: unfinished
// temporary directories, and index directories other than current. A
// reader that opened an old index keeps its open files; deleting them is
// harmless on POSIX systems and retried by the next build elsewhere.
func removeStale(out, current string) {
	entries, err := os.ReadDir(out)
	if err != nil {
		return
	}
	for _, e := range entries {
		name := e.Name()
		stale := strings.HasPrefix(name, "tmp-index-") && current == ""
		stale = stale || (current != "" && strings.HasPrefix(name, "index-") && name != current)
		if stale {
			os.RemoveAll(filepath.Join(out, name))
		}
	}
}

// ensureGitignore keeps the artifact out of git.
func ensureGitignore(out string) error {
	name := filepath.Join(out, ".gitignore")
	if _, err := os.Stat(name); err == nil {
		return nil
	}
	return os.WriteFile(name, []byte("# kbq artifact: built by kbc, never committed\n*\n"), 0o644)
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
