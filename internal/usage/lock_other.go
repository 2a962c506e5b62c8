//go:build !unix

package usage

import "os"

// Systems without flock append without a lock (appends are still whole
// writes) and never compact, which could lose records written meanwhile.
func lockShared(*os.File) error { return nil }

func tryLock(*os.File) (bool, error) { return false, nil }
