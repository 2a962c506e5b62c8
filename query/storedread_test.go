package query

import (
	"fmt"
	"slices"
	"testing"

	"github.com/kbqdev/kbq/internal/testkb"
)

// TestStoredReaderMatchesIce reads every chunk's stored fields with pread
// and through ice's own reader: the same fields, values and order.
func TestStoredReaderMatchesIce(t *testing.T) {
	files := testkb.Files{".kb/context.md": "Project context.\n"}
	for i := range 300 {
		files[fmt.Sprintf(".kb/topics/t%03d.md", i)] = fmt.Sprintf("---\ntitle: T %d\ntags: [a, b%d]\nimportance: 0.%d\n---\n# T %d\n\n## One\n\nText %d.\n\n## Two\n\n%s\n", i, i%7, i%10, i, i, longText(i))
	}
	ix, err := Open(testkb.Build(t, files))
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	type kv struct{ field, value string }
	for doc := range ix.engine.maxDoc {
		var got, want []kv
		if err := ix.engine.visitStored(doc, nil, func(f string, v []byte) bool { got = append(got, kv{f, string(v)}); return true }); err != nil {
			t.Fatal(err)
		}
		s := ix.engine.segOf(doc)
		if err := s.VisitStoredFields(doc-s.base, func(f string, v []byte) bool { want = append(want, kv{f, string(v)}); return true }); err != nil {
			t.Fatal(err)
		}
		if len(want) == 0 || !slices.Equal(got, want) {
			t.Fatalf("chunk %d: pread gives %v, ice %v", doc, got, want)
		}
	}
}

// longText is a section long enough that its record needs a second read.
func longText(i int) string {
	b := make([]byte, 0, 9000)
	for j := 0; len(b) < 8000+i; j++ {
		b = fmt.Appendf(b, "word%d ", (i*j)%9973)
	}
	return string(b)
}
