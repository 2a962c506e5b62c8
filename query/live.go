package query

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/kbqdev/kbq/artifact"
)

// Live serves an artifact that a build may replace at any time: every
// request gets the newest index, and an old index is closed once the last
// request using it has finished. A build publishes by renaming a new
// manifest into place; Live notices by polling the manifest's identity.
type Live struct {
	dir     string
	ranking Ranking

	mu      sync.Mutex
	current *handle
	stamp   fileStamp
	err     error // why the newest artifact could not be opened, if it could not
}

// handle is an open index and the requests using it.
type handle struct {
	ix      *Index
	refs    int
	retired bool
}

// fileStamp identifies a version of the manifest file.
type fileStamp struct {
	mod  time.Time
	size int64
	ino  uint64
}

// NewLive serves the artifact in dir, which need not exist yet: until it
// does, Acquire fails saying what to run, and Reload (or Watch) takes it
// into service as soon as a build publishes it.
func NewLive(dir string, r Ranking) *Live {
	l := &Live{dir: dir, ranking: r}
	l.Reload()
	return l
}

// OpenLive opens the artifact in dir and keeps it current.
func OpenLive(dir string, r Ranking) (*Live, error) {
	l := &Live{dir: dir, ranking: r}
	if err := l.Reload(); err != nil {
		return nil, err
	}
	return l, nil
}

// Acquire returns the current index and a release function that the
// caller must call when done with it.
func (l *Live) Acquire() (*Index, func(), error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	h := l.current
	if h == nil {
		if l.err == nil {
			l.err = errors.New("no artifact")
		}
		return nil, nil, l.err
	}
	h.refs++
	var once sync.Once
	return h.ix, func() { once.Do(func() { l.release(h) }) }, nil
}

func (l *Live) release(h *handle) {
	l.mu.Lock()
	defer l.mu.Unlock()
	h.refs--
	if h.retired && h.refs == 0 {
		h.ix.Close()
	}
}

// Reload opens the artifact again if its manifest changed. A new artifact
// that cannot be opened leaves the current one in service.
func (l *Live) Reload() error {
	stamp, err := stampOf(filepath.Join(l.dir, artifact.ManifestFile))
	l.mu.Lock()
	same := err == nil && l.current != nil && stamp == l.stamp
	l.mu.Unlock()
	if same {
		return nil
	}
	if err != nil {
		return l.failed(err)
	}
	ix, err := OpenWith(l.dir, l.ranking)
	if err != nil {
		return l.failed(err)
	}
	l.mu.Lock()
	old := l.current
	l.current, l.stamp, l.err = &handle{ix: ix}, stamp, nil
	if old != nil {
		old.retired = true
		if old.refs == 0 {
			old.ix.Close()
		}
	}
	l.mu.Unlock()
	return nil
}

func (l *Live) failed(err error) error {
	switch {
	case errors.Is(err, os.ErrNotExist) && !errors.Is(err, artifact.ErrNoArtifact):
		err = fmt.Errorf("%w: %s has no manifest.json yet: build the artifact with `kbc build` (it is used as soon as it appears)", artifact.ErrNoArtifact, l.dir)
	case errors.Is(err, artifact.ErrNoArtifact):
		err = fmt.Errorf("%w: build the artifact with `kbc build` (it is used as soon as it appears)", err)
	case errors.Is(err, artifact.ErrCorrupt), errors.Is(err, artifact.ErrIncompatible):
		err = fmt.Errorf("%w: rebuild it with `kbc build` (it is used as soon as it appears)", err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.current == nil {
		l.err = err
	}
	return err
}

// Watch reloads the artifact every interval until ctx ends. Errors leave
// the current index in service; OnError, when set, hears about them.
func (l *Live) Watch(ctx context.Context, interval time.Duration, onError func(error)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	var last string
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			msg := ""
			if err := l.Reload(); err != nil {
				msg = err.Error()
				if msg != last && onError != nil {
					onError(err)
				}
			}
			last = msg
		}
	}
}

// Close closes the current index once its requests are done.
func (l *Live) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if h := l.current; h != nil {
		h.retired = true
		if h.refs == 0 {
			h.ix.Close()
		}
		l.current = nil
	}
	return nil
}

// Dir is the artifact directory.
func (l *Live) Dir() string { return l.dir }

func stampOf(path string) (fileStamp, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return fileStamp{}, err
	}
	return fileStamp{mod: fi.ModTime(), size: fi.Size(), ino: inode(fi)}, nil
}
