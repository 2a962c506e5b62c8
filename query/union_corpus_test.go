package query_test

import (
	"path/filepath"
	"testing"

	"github.com/kbqdev/kbq/internal/testkb"
	"github.com/kbqdev/kbq/internal/testreq"
	"github.com/kbqdev/kbq/query"
)

// Two real repositories' documentation, searched as one, rank as one
// artifact built from both: the Hugo docs and the PowerShell docs.
func TestUnionRanksCorporaAsOne(t *testing.T) {
	if testing.Short() {
		t.Skip("builds three artifacts of the shared corpora")
	}
	hugo, ok1 := testkb.Corpus(t, filepath.Join("..", "..", "shared", "corpora", "hugo-docs.tar.gz"))
	ps, ok2 := testkb.Corpus(t, filepath.Join("..", "..", "shared", "corpora", "powershell-docs.tar.gz"))
	if !ok1 || !ok2 {
		testreq.Skip(t, testreq.Corpora, "../shared/corpora is not there")
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
		ranksAlike(t, u, one, query.Request{Query: q, N: 20, AllScopes: true}, 1e-9)
	}
}
