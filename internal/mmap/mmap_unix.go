//go:build unix

package mmap

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// Map maps the file name read-only; unmap releases it.
//
// The file is opened with plain system calls rather than as an os.File,
// which would also try to register it with the runtime's poller and
// switch it back to blocking mode for Fd: four system calls a file
// rather than eight, in a fresh kbq search that maps five.
func Map(name string) ([]byte, func() error, error) {
	fd, err := open(name)
	if err != nil {
		return nil, nil, &os.PathError{Op: "open", Path: name, Err: err}
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, nil, &os.PathError{Op: "stat", Path: name, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, nil, fmt.Errorf("%s is not a regular file", name)
	}
	size := st.Size
	if size == 0 {
		return nil, func() error { return nil }, nil
	}
	if size != int64(int(size)) {
		return nil, nil, fmt.Errorf("%s is too large to map", name)
	}
	data, err := unix.Mmap(fd, 0, int(size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, nil, fmt.Errorf("map %s: %w", name, err)
	}
	return data, func() error { return unix.Munmap(data) }, nil
}

// MapWhole is Map for a file the caller reads whole or nearly (a model's
// weights, an index's vectors). Where the system has transparent huge
// pages, what is not yet in the page cache is read into it 2 MiB at a
// time, and every process after maps each such piece with one entry
// rather than 512. Read back after the page cache dropped them (after a
// restart, say), a model's weights and an index's vectors otherwise come
// in small pieces for as long as they stay cached: a fresh hybrid search
// of the PowerShell docs took 10.56 / 10.35 ms from files read back so,
// against 9.18 / 8.93 ms from files MapWhole read back.
func MapWhole(name string) ([]byte, func() error, error) {
	data, unmap, err := Map(name)
	if err == nil {
		adviseWhole(data)
	}
	return data, unmap, err
}

// open opens name read-only, again when interrupted, and without
// waiting for a writer when it is a named pipe (which Map refuses).
func open(name string) (int, error) {
	for {
		fd, err := unix.Open(name, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
		if err != unix.EINTR {
			return fd, err
		}
	}
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
