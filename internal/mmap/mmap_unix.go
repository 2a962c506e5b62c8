//go:build unix

package mmap

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// Map maps the file name read-only; unmap releases it.
func Map(name string) ([]byte, func() error, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	size := fi.Size()
	if size == 0 {
		return nil, func() error { return nil }, nil
	}
	if size != int64(int(size)) {
		return nil, nil, fmt.Errorf("%s is too large to map", name)
	}
	data, err := unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, nil, fmt.Errorf("map %s: %w", name, err)
	}
	return data, func() error { return unix.Munmap(data) }, nil
}

// Release lets the system drop the pages of a mapping from the process's
// memory; they are read again, from the page cache, when next touched. A
// large merge reads each input once, and would otherwise keep every page
// it read counted in its resident memory.
func Release(data []byte) {
	if len(data) > 0 {
		unix.Madvise(data, unix.MADV_DONTNEED)
	}
}
