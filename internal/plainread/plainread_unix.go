//go:build unix

package plainread

import (
	"os"

	"golang.org/x/sys/unix"
)

// Open opens name read-only, as os.Open does but without trying the
// poller: reads of the file block, as reads of a regular file do anyway.
func Open(name string) (*os.File, error) {
	fd, err := open(name)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: name, Err: err}
	}
	return os.NewFile(uintptr(fd), name), nil
}

// ReadFile reads the regular file name whole, as os.ReadFile does. A file
// larger than limit bytes (limit > 0) is not read: the error is a
// *TooLargeError with the size fstat gives. Anything but a regular file
// is an error, and a named pipe put where a file was listed is refused
// rather than waited on for a writer.
func ReadFile(name string, limit int64) ([]byte, error) {
	fd, err := openFlags(name, unix.O_NONBLOCK) // no effect on a regular file's reads
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: name, Err: err}
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := fstat(fd, &st); err != nil {
		return nil, &os.PathError{Op: "stat", Path: name, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, &os.PathError{Op: "read", Path: name, Err: errNotRegular}
	}
	if limit > 0 && st.Size > limit {
		return nil, &TooLargeError{Name: name, Size: st.Size, Limit: limit}
	}
	// A byte over the size, to see the file end there; a file that grew
	// since fstat is read to its end, up to limit.
	data := make([]byte, 0, st.Size+1)
	for {
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)]
		}
		n, err := read(fd, data[len(data):cap(data)])
		if err != nil {
			return nil, &os.PathError{Op: "read", Path: name, Err: err}
		}
		if n == 0 {
			return data, nil
		}
		data = data[:len(data)+n]
		if limit > 0 && int64(len(data)) > limit {
			return nil, &TooLargeError{Name: name, Size: int64(len(data)), Limit: limit}
		}
	}
}

// The calls below are made again when a signal interrupts them, as the os
// package's are.

func open(name string) (int, error) { return openFlags(name, 0) }

func openFlags(name string, flags int) (int, error) {
	for {
		fd, err := unix.Open(name, unix.O_RDONLY|unix.O_CLOEXEC|flags, 0)
		if err != unix.EINTR {
			return fd, err
		}
	}
}

func fstat(fd int, st *unix.Stat_t) error {
	for {
		if err := unix.Fstat(fd, st); err != unix.EINTR {
			return err
		}
	}
}

func read(fd int, b []byte) (int, error) {
	for {
		n, err := unix.Read(fd, b)
		if err != unix.EINTR {
			if n < 0 {
				n = 0
			}
			return n, err
		}
	}
}
