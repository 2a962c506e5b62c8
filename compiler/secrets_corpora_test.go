package compiler

import (
	"archive/tar"
	"compress/gzip"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The secret guard raises no error on real documentation: the shared
// corpora (skipped when ../shared is absent) and this repository's own
// knowledge and docs.
func TestSecretsNoFalsePositives(t *testing.T) {
	check := func(name string, data []byte) {
		for _, got := range secretsIn(string(data)) {
			t.Errorf("%s:%s", name, got)
		}
	}
	for _, corpus := range []string{"hugo-docs.tar.gz", "powershell-docs.tar.gz"} {
		path := filepath.Join("..", "..", "shared", "corpora", corpus)
		f, err := os.Open(path)
		if err != nil {
			t.Logf("%s: %v (skipped)", corpus, err)
			continue
		}
		zr, err := gzip.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		tr := tar.NewReader(zr)
		n := 0
		for {
			h, err := tr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if h.Typeflag != tar.TypeReg || !strings.HasSuffix(h.Name, ".md") {
				continue
			}
			data, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			check(corpus+"/"+h.Name, data)
			n++
		}
		f.Close()
		if n < 900 {
			t.Errorf("%s: read %d markdown files", corpus, n)
		}
	}
	for _, dir := range []string{"../.kb", "../docs"} {
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".md") {
				return err
			}
			data, err := os.ReadFile(p)
			if err == nil {
				check(p, data)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}
