package compiler

import (
	"strings"
	"testing"
)

func TestConvertHTML(t *testing.T) {
	page := `<html><head><title> The  Guide </title><script>var x = "<h1>no</h1>";</script></head>
<body>
<nav>Home | About</nav>
<h1>Install</h1>
<p>Run the
installer &amp; wait.</p>
<ul><li>one</li><li>two</li></ul>
<h2>Configure</h2>
<pre>line a
line b</pre>
<table><tr><td>key</td><td>value</td></tr></table>
<footer>(c) someone</footer>
</body></html>`
	got := convertHTML([]byte(page))
	want := "# Install\n\nRun the installer & wait.\n\n- one\n\n- two\n\n## Configure\n\nline a\nline b\n\nkey value\n"
	if string(got.text) != want {
		t.Errorf("text:\n%s\nwant:\n%s", got.text, want)
	}
	if got.title != "The Guide" {
		t.Errorf("title %q", got.title)
	}
	if n := strings.Count(string(got.text), "\n"); len(got.lines) != n {
		t.Fatalf("%d line spans for %d lines", len(got.lines), n)
	}
	for i, want := range map[int][2]int{0: {4, 4}, 2: {5, 6}, 8: {8, 8}, 10: {9, 9}, 11: {10, 10}} {
		if got.lines[i] != want {
			t.Errorf("line %d of the text comes from %v, want %v", i, got.lines[i], want)
		}
	}
	for _, hidden := range []string{"var x", "Home", "someone", "no"} {
		if strings.Contains(string(got.text), hidden) {
			t.Errorf("%q was kept", hidden)
		}
	}
}

func FuzzConvertHTML(f *testing.F) {
	f.Add("<h1>a</h1><p>b<script>c</script></p><pre>x\ny</pre>")
	f.Fuzz(func(t *testing.T, page string) {
		got := convertHTML([]byte(page))
		if n := strings.Count(string(got.text), "\n"); len(got.lines) != n {
			t.Fatalf("%d line spans for %d lines of %q", len(got.lines), n, got.text)
		}
		for _, l := range got.lines {
			if l[0] > l[1] || l[0] < 0 {
				t.Fatalf("line span %v", l)
			}
		}
	})
}
