package hugeheap

import "golang.org/x/sys/unix"

const supported = true

// advise asks for huge pages over b. A kernel without transparent huge
// pages refuses, and b stays as it was.
func advise(b []byte) {
	_ = unix.Madvise(b, unix.MADV_HUGEPAGE)
}
