package mmap

import "golang.org/x/sys/unix"

// adviseWhole asks for the huge pages MapWhole promises. A kernel without
// transparent huge pages refuses, and the mapping stays as it was.
func adviseWhole(data []byte) {
	if len(data) > 0 {
		_ = unix.Madvise(data, unix.MADV_HUGEPAGE)
	}
}
