//go:build unix && !linux

package mmap

// adviseWhole does nothing where there is no advice for huge pages.
func adviseWhole([]byte) {}
