package render

import (
	"bytes"
	"strings"
	"testing"

	"github.com/kbqdev/kbq/query"
)

func TestSearchTextHighlights(t *testing.T) {
	resp := &query.Response{Results: []query.Result{{
		Path: ".kb/a.md", Lines: [2]int{3, 9}, Heading: "Deploy > Rollback", Kind: "topic", Scope: "project",
		Snippet: "roll back with make rollback", Highlights: [][2]int{{15, 19}, {20, 28}}, Tags: []string{"ops"},
	}}}
	var plain, colored bytes.Buffer
	SearchText(&plain, resp, false)
	SearchText(&colored, resp, true)
	if strings.Contains(plain.String(), "\x1b[") {
		t.Errorf("plain output has escapes: %q", plain.String())
	}
	want := ".kb/a.md:3-9  Deploy > Rollback  [topic, ops · project] 0.00\n    roll back with make rollback\n"
	if plain.String() != want {
		t.Errorf("plain:\n%q\nwant\n%q", plain.String(), want)
	}
	if !strings.Contains(colored.String(), styleMatch+"make"+styleReset+" "+styleMatch+"rollback"+styleReset) {
		t.Errorf("matches are not highlighted: %q", colored.String())
	}
}
