package mmap

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

func TestMap(t *testing.T) {
	dir := t.TempDir()
	want := bytes.Repeat([]byte("kbq "), 5000)
	name := filepath.Join(dir, "data")
	if err := os.WriteFile(name, want, 0o644); err != nil {
		t.Fatal(err)
	}
	data, unmap, err := Map(name)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(data, want) {
		t.Errorf("mapped %d bytes, not the file's %d", len(data), len(want))
	}
	if err := unmap(); err != nil {
		t.Error(err)
	}

	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if data, unmap, err := Map(empty); err != nil || len(data) != 0 || unmap() != nil {
		t.Errorf("an empty file: %d bytes, %v", len(data), err)
	}

	if _, _, err := Map(filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing file: %v, want one that is fs.ErrNotExist", err)
	}
	if _, _, err := Map(dir); err == nil {
		t.Error("a directory was mapped")
	}
}
