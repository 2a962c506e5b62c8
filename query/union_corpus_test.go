package query_test

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kbqdev/kbq/compiler"
	"github.com/kbqdev/kbq/internal/testkb"
	"github.com/kbqdev/kbq/query"
)

// corpusFiles reads a shared corpus (../shared/corpora) as topics of a
// knowledge base, leaving out the few files the compiler refuses; ok is
// false when the corpus is not there.
func corpusFiles(t *testing.T, name string) (testkb.Files, bool) {
	f, err := os.Open(filepath.Join("..", "..", "shared", "corpora", name))
	if err != nil {
		return nil, false
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	files := testkb.Files{}
	tr := tar.NewReader(zr)
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
		inner := strings.TrimPrefix(h.Name, "./")
		if compiler.Validate(inner, data).Errors() > 0 {
			continue
		}
		files[".kb/"+inner] = string(data)
	}
	return files, true
}

// Two real repositories' documentation, searched as one, rank as one
// artifact built from both: the Hugo docs and the PowerShell docs.
func TestUnionRanksCorporaAsOne(t *testing.T) {
	if testing.Short() {
		t.Skip("builds three artifacts of the shared corpora")
	}
	hugo, ok1 := corpusFiles(t, "hugo-docs.tar.gz")
	ps, ok2 := corpusFiles(t, "powershell-docs.tar.gz")
	if !ok1 || !ok2 {
		t.Skip("../shared/corpora is not there")
	}
	all := testkb.Files{}
	for p, text := range hugo {
		all[p] = text
	}
	for p, text := range ps {
		if _, clash := all[p]; clash {
			delete(ps, p)
			continue
		}
		all[p] = text
	}
	one := open(t, all)
	u, err := query.NewUnion([]query.Part{{Name: "hugo", Index: open(t, hugo)}, {Name: "powershell", Index: open(t, ps)}})
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		"execution policy", "set an environment variable for the current session", "retries", "pipeline",
		"get child items recursively", "start a background job and wait", "shortcode", "taxonomy templates",
		"configure the base url", `"front matter"`, "image processing resize", "module +mounts",
	} {
		req := query.Request{Query: q, N: 20, AllScopes: true}
		want, err := one.Search(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		got, err := u.Search(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Results) != len(want.Results) || len(want.Results) == 0 {
			t.Errorf("%q: %d results, want %d", q, len(got.Results), len(want.Results))
			continue
		}
		for k := range want.Results {
			g, w := got.Results[k], want.Results[k]
			if g.Path != w.Path || math.Abs(g.Score-w.Score) > 1e-9*max(1, w.Score) {
				t.Errorf("%q: result %d is %s:%s (%.6f), want %s (%.6f)", q, k, g.Repo, g.Path, g.Score, w.Path, w.Score)
				break
			}
		}
	}
}
