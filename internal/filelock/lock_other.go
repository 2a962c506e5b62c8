//go:build !unix && !windows

package filelock

import "os"

// Systems with neither flock nor LockFileEx take no locks: Shared always
// succeeds and TryExclusive always does too, so one process at a time is
// the caller's to ensure there.
func Shared(*os.File) error { return nil }

// TryExclusive takes an exclusive lock on f if no one holds any.
func TryExclusive(*os.File) (bool, error) { return true, nil }
