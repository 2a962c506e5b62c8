//go:build unix

package safefs

import "syscall"

const noFollow = syscall.O_NOFOLLOW
