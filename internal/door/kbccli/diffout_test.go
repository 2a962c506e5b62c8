package kbccli

import (
	"strings"
	"testing"

	"github.com/kbqdev/kbq/compiler"
)

// A title a pull request chose cannot mention anyone, link, embed or
// carry HTML in the comment kbc diff --format md writes, nor break out
// of the diagnostics' fence.
func TestDiffMarkdownEscapesTitles(t *testing.T) {
	r := &compiler.DiffResult{Base: "a", Head: "b", Entries: []compiler.DiffEntry{{
		Change: "added", Kind: "topic", Topic: "x", Scope: "project",
		Title:       "<img src=x onerror=alert(1)> ping @org/team and [click](https://evil.example) ![i](https://evil.example/i.png) | cell",
		Diagnostics: []compiler.Diagnostic{{Path: ".kb/x.md", Line: 1, Col: 1, Severity: compiler.Warning, Message: "text ```\n</details><img src=y> @all"}},
	}}}
	var b strings.Builder
	if err := writeDiff(&b, "md", r); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	row := out[strings.Index(out, "| ➕ added"):]
	row = row[:strings.Index(row, "\n")]
	for _, bad := range []string{"<img", "@org", "[click](", "![i](", " | cell"} {
		if strings.Contains(row, bad) {
			t.Errorf("the row carries %q raw:\n%s", bad, row)
		}
	}
	if n := strings.Count(row, " | "); n != 5 {
		t.Errorf("the row has %d cells' separators, want 5:\n%s", n, row)
	}
	details := out[strings.Index(out, "<details>"):]
	fence := details[strings.Index(details, "\n\n")+2:]
	fence = fence[:strings.Index(fence, "\n")]
	if len(fence) < 4 || strings.Trim(fence, "`") != "" {
		t.Errorf("the diagnostics' fence %q does not outrun the ``` inside", fence)
	}
}
