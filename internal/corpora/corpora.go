// Package corpora reads the shared benchmark corpora (../shared/corpora,
// .tar.gz archives of documentation) for tests and benchmarks.
package corpora

import (
	"archive/tar"
	"compress/gzip"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Markdown calls fn with the name and content of every markdown file of
// the archive at path, in archive order. A missing archive is an error
// for which os.IsNotExist holds.
func Markdown(path string, fn func(name string, data []byte)) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return err
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if h.Typeflag != tar.TypeReg || !strings.HasSuffix(h.Name, ".md") {
			continue
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			return err
		}
		fn(strings.TrimPrefix(h.Name, "./"), data)
	}
}

// MarkdownIn calls fn with the path and content of every markdown file
// under the directory dir, in lexical order: a repository's own
// knowledge and documentation, read as the archives are.
func MarkdownIn(dir string, fn func(path string, data []byte)) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".md") {
			return err
		}
		data, err := os.ReadFile(p)
		if err == nil {
			fn(p, data)
		}
		return err
	})
}
