package testkb

import (
	"os"
	"testing"

	"github.com/kbqdev/kbq/compiler"
	"github.com/kbqdev/kbq/internal/corpora"
	"github.com/kbqdev/kbq/internal/testreq"
)

// Corpus reads the markdown files of a shared corpus (a .tar.gz of
// ../shared/corpora) as topics under .kb/, leaving out the few files the
// compiler refuses; ok is false when the corpus is not there.
func Corpus(t testing.TB, path string) (files Files, ok bool) {
	t.Helper()
	files = Files{}
	err := corpora.Markdown(path, func(name string, data []byte) {
		if compiler.Validate(name, data).Errors() == 0 {
			files[".kb/"+name] = string(data)
		}
	})
	if os.IsNotExist(err) {
		if testreq.Required(testreq.Corpora) {
			t.Fatalf("KBQ_TEST_REQUIRE needs corpora, which are missing: %v", err)
		}
		return nil, false
	}
	if err != nil {
		t.Fatal(err)
	}
	return files, true
}
