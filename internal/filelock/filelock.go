// Package filelock takes the advisory file locks that builds, writes of
// knowledge and the usage log take turns with. A lock file is opened
// without following a symbolic link, so a link planted where a lock is
// taken never makes kbc create or open a file elsewhere.
package filelock

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/kbqdev/kbq/internal/safefs"
)

// Wait takes an exclusive lock on path, creating the file, and waits up to
// timeout for another process to release it. It returns the release.
func Wait(path string, timeout time.Duration) (func(), error) {
	deadline := time.Now().Add(timeout)
	for wait := time.Millisecond; ; wait = min(wait*2, 100*time.Millisecond) {
		f, err := safefs.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
		if err != nil {
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		ok, err := TryExclusive(f)
		if ok {
			return func() { f.Close() }, nil
		}
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("lock %s: %w", path, ErrTimeout)
		}
		time.Sleep(wait)
	}
}

// ErrTimeout means another process held a lock for longer than the wait.
var ErrTimeout = errors.New("held by another process for too long")
