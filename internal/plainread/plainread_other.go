//go:build !unix

package plainread

import (
	"io"
	"os"
)

// Open opens name read-only.
func Open(name string) (*os.File, error) { return os.Open(name) }

// ReadFile reads the regular file name whole. A file larger than limit bytes
// (limit > 0) is not read: the error is a *TooLargeError.
func ReadFile(name string, limit int64) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, &os.PathError{Op: "read", Path: name, Err: errNotRegular}
	}
	if limit > 0 && fi.Size() > limit {
		return nil, &TooLargeError{Name: name, Size: fi.Size(), Limit: limit}
	}
	r := io.Reader(f)
	if limit > 0 {
		r = io.LimitReader(f, limit+1)
	}
	data := make([]byte, 0, fi.Size()+1)
	for {
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)]
		}
		n, err := r.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if limit > 0 && int64(len(data)) > limit {
			return nil, &TooLargeError{Name: name, Size: int64(len(data)), Limit: limit}
		}
		if err == io.EOF {
			return data, nil
		}
		if err != nil {
			return nil, err
		}
	}
}
