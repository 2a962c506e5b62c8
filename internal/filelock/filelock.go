// Package filelock takes the exclusive file locks that builds and writes
// of knowledge take turns with.
package filelock

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/blugelabs/bluge/index/lock"
)

// Wait takes an exclusive lock on path, creating the file, and waits up to
// timeout for another process to release it. It returns the release.
func Wait(path string, timeout time.Duration) (func(), error) {
	deadline := time.Now().Add(timeout)
	for wait := time.Millisecond; ; wait = min(wait*2, 100*time.Millisecond) {
		lk, err := lock.OpenExclusive(path, os.O_CREATE|os.O_RDWR, 0o644)
		if err == nil {
			return func() { lk.Close() }, nil
		}
		if errors.Is(err, os.ErrNotExist) || errors.Is(err, os.ErrPermission) || time.Now().After(deadline) {
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		time.Sleep(wait)
	}
}
