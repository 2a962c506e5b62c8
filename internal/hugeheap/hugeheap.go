// Package hugeheap has the kernel back a heap about to grow with huge
// pages.
//
// Go's runtime does not ask for transparent huge pages, and where the
// kernel gives them only to memory that asks (transparent_hugepage set to
// madvise, the default of many distributions), each fresh 4 KiB page of a
// growing heap costs a page fault: a build of 3,088 documents from nothing
// takes 40,000 of them, a tenth of its CPU. Grow maps the heap a build will
// grow into in one piece, asks for huge pages over it, and hands it back to
// the runtime, which then allocates from it: 2 MiB a fault.
package hugeheap

import (
	"runtime"
	"sync"
)

var once sync.Once

// Grow maps n bytes of heap, asks the kernel to back them with huge pages
// where it can, and frees them for the runtime to allocate from. None of
// the memory is touched, so none of it is resident until used; a
// collection runs to free it at once. Grow acts once in a process (the
// heap stays grown) and does nothing on systems without transparent huge
// pages.
func Grow(n int) {
	if n <= 0 || !supported {
		return
	}
	once.Do(func() {
		b := make([]byte, n) // fresh from the system: neither zeroed nor touched
		advise(b)
		runtime.KeepAlive(b)
		runtime.GC()
	})
}
