package compiler

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// plainMatchesYAML fails t unless plainYAML either declines data or
// parses it as yaml.Unmarshal does; it reports whether it parsed it.
func plainMatchesYAML(t *testing.T, data string) bool {
	t.Helper()
	got, ok := plainYAML([]byte(data))
	if !ok {
		return false
	}
	var want yaml.Node
	if err := yaml.Unmarshal([]byte(data), &want); err != nil {
		t.Fatalf("%q: parsed, but yaml says %v", data, err)
	}
	if !reflect.DeepEqual(got, &want) {
		t.Fatalf("%q:\n got %s\nwant %s", data, dumpNode(got), dumpNode(&want))
	}
	return true
}

func dumpNode(n *yaml.Node) string {
	var b strings.Builder
	var walk func(n *yaml.Node, depth int)
	walk = func(n *yaml.Node, depth int) {
		fmt.Fprintf(&b, "%s%d %s %q at %d:%d, style %d, comments %q %q %q\n", strings.Repeat("  ", depth),
			n.Kind, n.Tag, n.Value, n.Line, n.Column, n.Style, n.HeadComment, n.LineComment, n.FootComment)
		for _, c := range n.Content {
			walk(c, depth+1)
		}
	}
	walk(n, 0)
	return b.String()
}

// The frontmatter of most documents, the PowerShell docs' for one, takes
// the fast path, and comes out as the YAML library's.
func TestPlainYAML(t *testing.T) {
	taken := []string{
		"description: Explains the differences between the [psobject] and [pscustomobject] type accelerators.\nLocale: en-US\nms.date: 07/02/2024\nonline version: https://learn.microsoft.com/powershell/module/about?view=powershell-5.1&WT.mc_id=ps-gethelp\nschema: 2.0.0\ntitle: about_PSCustomObject\n",
		"title: Release process\nimportance: 0.8\nstatus: active\n",
		"a: true\nb: null\nc: 1_000\nd: 0x1f\ne: 1e3\nf: .5\ng: 2024-01-02\nh: 2024-01-02T10:00:00Z\ni: ~\nj: .inf\nk: C# and F#\nl: a:b\nm: x,y\nn:    spaced   \n",
		"true: key\n2: two\n",
		"aliases:\n  - gcai\n  - gc\ntitle: Get-CimAssociatedInstance\n",
		"aliases:\n- a\n-   b\nx: y\n",
		"tags: [a, b,c , 1, true]\nempty: []\nspaced: [ x ]\nlast: z\n",
		"title: Emojis\nparams:\n  searchable: false\n  deep:\n    list: [a]\n    more:\n    - b\n  back: c\nlast: d\n",
	}
	for _, data := range taken {
		if !plainMatchesYAML(t, data) {
			t.Errorf("%q: not taken", data)
		}
	}
	declined := []string{
		"", "a: b", "a: 'quoted'\n", "a: \"q\"\n", "# comment\na: b\n", "a: b # comment\n",
		"a: b\n\nc: d\n", "a:\n  - x\n   - y\n", "a:\n  - [x]\n", "a: [x, [y]]\n", "a: [x] y\n", "a: [x,\n y]\n", "a:\nb: c\n", "a:b\n", "a:\n  b: c\n d: e\n", "a:\n  b: c\n    d: e\n", "a:\n  b:\n", "a:\n", "a: b\n  continued\n", "a: -1\n", "a: - x\n", "a: b:\n", "a: b: c\n",
		"a: b\r\n", "a:\tb\n", "a: é\n", "key:\n", "- a\n", "a: *x\n", "a: &x y\n", "a: !t y\n", "a: |\n  x\n",
		"a: >\n  x\n", "? a\n: b\n", "a : b\n", "a: b\n---\n", "%YAML 1.2\n", "{a: b}\n",
	}
	for _, data := range declined {
		if plainMatchesYAML(t, data) {
			t.Errorf("%q: taken", data)
		}
	}
}

func FuzzPlainYAMLMatchesYAML(f *testing.F) {
	for _, s := range []string{
		"title: T\nms.date: 07/02/2024\n", "a: 1\nb: 2.0.0\nc: -x\n", "k: v # c\n", "a: b:c\nd: e\n",
		"x: 0b101\ny: 0o17\nz: +12\n", "a:\n  - x\n  - 1\nb: [c, 2.0]\n", "a: []\n", "p:\n  a: b\n  c:\n  - d\n  e: [f]\ng: h\n", "a: 2001-12-14t21:59:43.10-05:00\n", "a: 1:20\n", "a: b\na: c\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data string) {
		plainMatchesYAML(t, data)
	})
}

// Frontmatter put together from lines of keys, scalars, lists and
// mappings at random indentations, tricky scalars among them: whatever
// plainYAML takes, it parses as the YAML library does, and it takes many.
func TestPlainYAMLGenerated(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	words := []string{"a", "title", "x y", "1", "0x1f", "0o7", "1_000", "+1", "-1", ".5", "1e3", "true", "False", "null", "~",
		"2024-01-02", "2024-01-02 10:00:00", "a:b", "C#", "a #b", "..", "...", "<<", ".inf", "-.inf", "https://x.y/z?a=b&c", "[x]", "y]", "a,b", "é"}
	word := func() string { return words[r.IntN(len(words))] }
	taken := 0
	for range 20000 {
		var b strings.Builder
		for i := range 1 + r.IntN(6) {
			indent := ""
			switch n := r.IntN(10); {
			case i == 0 || n < 6:
			case n < 9:
				indent = "  "
			default:
				indent = strings.Repeat(" ", 1+r.IntN(4))
			}
			switch r.IntN(5) {
			case 0:
				fmt.Fprintf(&b, "%s%s:\n", indent, word())
			case 1:
				fmt.Fprintf(&b, "%s- %s\n", indent, word())
			case 2:
				items := make([]string, r.IntN(3))
				for i := range items {
					items[i] = word()
				}
				fmt.Fprintf(&b, "%s%s: [%s]\n", indent, word(), strings.Join(items, ", "))
			default:
				fmt.Fprintf(&b, "%s%s: %s\n", indent, word(), word())
			}
		}
		if plainMatchesYAML(t, b.String()) {
			taken++
		}
	}
	if taken < 1000 {
		t.Fatalf("%d of 20000 taken", taken)
	}
}
