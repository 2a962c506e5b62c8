package mmap

import "sync/atomic"

// PageSize is the smallest page a system maps.
const PageSize = 4096

// touched keeps the bytes Touch reads from being optimised away.
var touched atomic.Uint32

// Touch reads a byte of every page of b, so that the system maps them
// now: a process pays for each page of a mapping the first time it reads
// one, and a caller can pay it ahead, beside other work.
func Touch(b []byte) {
	var sum byte
	for i := 0; i < len(b); i += PageSize {
		sum += b[i]
	}
	touched.Add(uint32(sum))
}
