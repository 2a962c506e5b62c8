package querytest

import (
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// FlipEachByte damages the artifact in dir one byte at a time: for every
// file (but locks), every stride-th byte is inverted, try is called with
// the file's path in dir and the offset, and the byte is put back. It
// returns how many bytes it flipped.
func FlipEachByte(t testing.TB, dir string, stride int, try func(rel string, off int)) int {
	t.Helper()
	var paths []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && !strings.HasSuffix(p, ".lock") {
			paths = append(paths, p)
		}
		return err
	})
	sort.Strings(paths)
	flips := 0
	for _, p := range paths {
		orig, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(dir, p)
		for off := 0; off < len(orig); off += stride {
			damaged := append([]byte(nil), orig...)
			damaged[off] ^= 0xff
			if err := os.WriteFile(p, damaged, 0o644); err != nil {
				t.Fatal(err)
			}
			flips++
			try(rel, off)
		}
		if err := os.WriteFile(p, orig, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return flips
}
