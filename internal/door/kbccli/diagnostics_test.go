package kbccli

import (
	"bytes"
	"testing"

	"github.com/kbqdev/kbq/compiler"
)

func TestGithubAnnotations(t *testing.T) {
	ds := compiler.Diagnostics{
		{Path: "a,b:c%.md", Line: 3, Col: 7, Severity: compiler.Error, Message: "bad: 100% wrong,\nreally"},
		{Path: "x.md", Line: 1, Col: 1, Severity: compiler.Warning, Message: "empty file"},
	}
	var buf bytes.Buffer
	if err := writeDiagnostics(&buf, "github", ds); err != nil {
		t.Fatal(err)
	}
	want := "::error file=a%2Cb%3Ac%25.md,line=3,col=7,title=kbc error::bad: 100%25 wrong,%0Areally\n" +
		"::warning file=x.md,line=1,col=1,title=kbc warning::empty file\n"
	if buf.String() != want {
		t.Errorf("got\n%s\nwant\n%s", buf.String(), want)
	}
}

// A text diagnostic is one line, whatever the file is called.
func TestTextDiagnosticQuotesControlCharacters(t *testing.T) {
	ds := compiler.Diagnostics{
		{Path: ".kb/new\nline.md", Line: 2, Col: 13, Severity: compiler.Error, Message: "importance: must be a number from 0 to 1, not 7"},
		{Path: ".kb/日本 a,b.md", Line: 1, Col: 1, Severity: compiler.Warning, Message: "empty file"},
	}
	var buf bytes.Buffer
	if err := writeDiagnostics(&buf, "text", ds); err != nil {
		t.Fatal(err)
	}
	want := `".kb/new\nline.md":2:13: error: importance: must be a number from 0 to 1, not 7` + "\n" +
		".kb/日本 a,b.md:1:1: warning: empty file\n"
	if buf.String() != want {
		t.Errorf("got\n%s\nwant\n%s", buf.String(), want)
	}
}
