package plainread

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	for _, size := range []int{0, 1, 4095, 4096, 4097, 1 << 20} {
		name := filepath.Join(dir, "f")
		want := bytes.Repeat([]byte("knowledge\n"), size/10+1)[:size]
		if err := os.WriteFile(name, want, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, limit := range []int64{0, int64(size), int64(size) + 1} {
			got, err := ReadFile(name, limit)
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("size %d, limit %d: %d bytes, %v; want %d bytes", size, limit, len(got), err, len(want))
			}
		}
		if size > 1 { // a limit of 0 is none
			_, err := ReadFile(name, int64(size)-1)
			var tl *TooLargeError
			if !errors.As(err, &tl) || tl.Size != int64(size) || tl.Limit != int64(size)-1 {
				t.Fatalf("size %d over its limit: %v", size, err)
			}
		}
		f, err := Open(name)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(f)
		f.Close()
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("size %d through Open: %d bytes, %v", size, len(got), err)
		}
	}
}

func TestReadFileErrors(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing")
	if _, err := ReadFile(missing, 0); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadFile of a missing file: %v, want fs.ErrNotExist", err)
	}
	if _, err := Open(missing); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Open of a missing file: %v, want fs.ErrNotExist", err)
	}
	var pe *fs.PathError
	if _, err := ReadFile(missing, 0); !errors.As(err, &pe) || pe.Path != missing {
		t.Errorf("ReadFile of a missing file: %v, want a PathError naming it", err)
	}
	if data, err := ReadFile(dir, 0); !errors.Is(err, errNotRegular) {
		t.Errorf("ReadFile of a directory: %q, %v; want errNotRegular", data, err)
	}
}
