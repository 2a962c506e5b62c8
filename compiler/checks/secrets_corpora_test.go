package checks

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/kbqdev/kbq/internal/corpora"
	"github.com/kbqdev/kbq/internal/testreq"
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
		n := 0
		err := corpora.Markdown(filepath.Join("..", "..", "..", "shared", "corpora", corpus), func(name string, data []byte) {
			check(corpus+"/"+name, data)
			n++
		})
		if os.IsNotExist(err) {
			if testreq.Required(testreq.Corpora) {
				t.Fatalf("%s: %v (KBQ_TEST_REQUIRE asks for the shared corpora)", corpus, err)
			}
			t.Logf("%s: %v (skipped)", corpus, err)
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if n < 900 {
			t.Errorf("%s: read %d markdown files", corpus, n)
		}
	}
	for _, dir := range []string{"../../.kb", "../../docs"} {
		err := corpora.MarkdownIn(dir, check)
		if err != nil {
			t.Fatal(err)
		}
	}
}
