//go:build unix

package query

import (
	"io/fs"
	"syscall"
)

// inode returns the file's inode: a manifest replaced by rename has a new
// one even when its size and modification time are the same.
func inode(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Ino)
	}
	return 0
}
