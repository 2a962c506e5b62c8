package documents_test

import (
	"context"
	"strings"
	"testing"

	"github.com/kbqdev/kbq/internal/querytest"
	"github.com/kbqdev/kbq/internal/testkb"
	"github.com/kbqdev/kbq/query/documents"
)

// Heading levels follow the markdown parser's blocks: a `# line` inside a
// code block whose fences nest is no heading, and the heading after it is
// one; setext headings are rewritten as ATX.
func TestContextShiftsTheParsersHeadings(t *testing.T) {
	ix := querytest.Open(t, testkb.Files{"AGENTS.md": "# Rules\n\n````md\n```sh\n# not a heading\n```\n## Nor this\n````\n\n## After\n\nSetext\nheading\n---\n\ntext\n"})
	res, err := documents.Context(context.Background(), ix, "", documents.ContextOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"\n#### Rules\n", "\n# not a heading\n", "\n## Nor this\n", "\n##### After\n", "\n##### Setext heading\n\ntext"} {
		if !strings.Contains(res.Text, want) {
			t.Errorf("context lacks %q:\n%s", want, res.Text)
		}
	}
}
