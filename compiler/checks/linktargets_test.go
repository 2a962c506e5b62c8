package checks

import (
	"fmt"
	"regexp"
	"slices"
	"testing"
)

// linkTarget is the regular expression linkTargets stands for.
var linkTarget = regexp.MustCompile(`\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)`)

func checkLinkTargets(t *testing.T, line string) {
	var want, got [][2]int
	for _, m := range linkTarget.FindAllSubmatchIndex([]byte(line), -1) {
		want = append(want, [2]int{m[2], m[3]})
	}
	for m := range linkTargets([]byte(line)) {
		got = append(got, m)
	}
	if !slices.Equal(got, want) {
		t.Errorf("%q: got %v, want %v", line, got, want)
	}
}

var linkLines = []string{
	"see [the guide](docs/guide.md) and [x](y.md \"title\")",
	"[a](<b c.md>) [d](<e.md>) [f](<) [g](<>) [h](<i>j) [k](l>)",
	"[a]( spaced.md ) [b](\t\"t.md\"\t) [c](d.md \"unclosed) [e](f.md 'single')",
	"]](x.md)]( y )](z.md\"q\")](w.md  \"a\"  )",
	"[a](b.md \"t\" x) [c](d.md \"one\" \"two\") [e](f.md \"\")",
	"[no close](x.md [then](y.md)",
	"](\n\f\rx.md\r)", "](", "]()", "](<)", "](>)", "x](é.md)", "](a\"b\")",
	"[a](b.md#frag) [c](https://x.y/z.md) [d](../up.md) [e](/root.md)",
}

func TestLinkTargets(t *testing.T) {
	for _, line := range linkLines {
		checkLinkTargets(t, line)
	}
}

func FuzzLinkTargets(f *testing.F) {
	for _, line := range linkLines {
		f.Add(line)
	}
	for i := range 8 {
		f.Add(fmt.Sprintf("](%s<x>\"y\" )", string(rune('a'+i))))
	}
	f.Fuzz(checkLinkTargets)
}
