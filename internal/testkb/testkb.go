// Package testkb builds knowledge artifacts from in-memory files, for
// tests of the compiler and the query side.
package testkb

import (
	"context"
	"iter"
	"slices"
	"testing"
	"time"

	"github.com/kbqdev/kbq/artifact"
	"github.com/kbqdev/kbq/compiler"
	"github.com/kbqdev/kbq/gitsource"
)

// Files is a source made of path → content.
type Files map[string]string

// Files yields the files in path order.
func (fs Files) Files() iter.Seq2[gitsource.File, error] {
	return func(yield func(gitsource.File, error) bool) {
		paths := make([]string, 0, len(fs))
		for p := range fs {
			paths = append(paths, p)
		}
		slices.Sort(paths)
		for _, p := range paths {
			f := gitsource.File{Path: p, Blob: gitsource.HashBlob([]byte(fs[p])), Kind: gitsource.Regular}
			if !yield(f, nil) {
				return
			}
		}
	}
}

// Read returns a file's content.
func (fs Files) Read(f gitsource.File, max int64) ([]byte, error) {
	data := []byte(fs[f.Path])
	if int64(len(data)) > max {
		return nil, gitsource.ErrTooLarge
	}
	return data, nil
}

// BuiltAt is the build time of test artifacts.
var BuiltAt = time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)

// Build compiles files into a new artifact directory and returns it. It
// fails the test on any error or validation error.
func Build(t testing.TB, files Files) string {
	t.Helper()
	dir := t.TempDir()
	BuildInto(t, dir, files, nil)
	return dir
}

// BuildInto compiles files (and global, when not nil) into dir.
func BuildInto(t testing.TB, dir string, files, global Files) *compiler.BuildResult {
	t.Helper()
	opts := compiler.BuildOptions{Out: dir, BuiltAt: BuiltAt, Source: artifact.Source{Mode: "rev", Commit: "0123456789abcdef0123456789abcdef01234567"}}
	if global != nil {
		opts.Global = &compiler.Global{Dir: "/home/test/.config/kbq/knowledge", Source: global}
	}
	res, err := compiler.Build(context.Background(), files, opts)
	if err != nil {
		for _, d := range res.Diagnostics {
			t.Log(d)
		}
		t.Fatalf("build: %v", err)
	}
	return res
}
