//go:build windows

package filelock

import (
	"errors"
	"os"

	"golang.org/x/sys/windows"
)

// Shared takes a shared lock on f, waiting for it.
func Shared(f *os.File) error {
	return lock(f, 0)
}

// TryExclusive takes an exclusive lock on f if no one holds any.
func TryExclusive(f *os.File) (bool, error) {
	err := lock(f, windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY)
	if errors.Is(err, windows.ERROR_LOCK_VIOLATION) {
		return false, nil
	}
	return err == nil, err
}

func lock(f *os.File, flags uint32) error {
	var ol windows.Overlapped
	return windows.LockFileEx(windows.Handle(f.Fd()), flags, 0, 1, 0, &ol)
}
