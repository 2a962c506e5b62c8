//go:build unix

package pgread

import (
	"io/fs"
	"syscall"
)

// links is how many directory entries name fi's file.
func links(fi fs.FileInfo) (uint64, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return uint64(st.Nlink), true
}
