//go:build !unix

package mmap

import "os"

// Map reads name: systems without mmap hold the file in memory.
func Map(name string) ([]byte, func() error, error) {
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, nil, err
	}
	return data, func() error { return nil }, nil
}

// Release does nothing where files are read into memory.
func Release([]byte) {}

// MapWhole is Map.
func MapWhole(name string) ([]byte, func() error, error) { return Map(name) }
