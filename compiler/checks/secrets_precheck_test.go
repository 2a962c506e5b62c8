package checks

import (
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// The rules' cheap tests (maybe) let no match through: on lines made of
// the pieces around their edges, and on this package's sources, the
// findings are those of the regexps run on every line with a keyword.
func TestSecretPrechecks(t *testing.T) {
	var texts [][]byte
	filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && filepath.Ext(p) == ".go" {
			b, _ := os.ReadFile(p)
			texts = append(texts, b)
		}
		return nil
	})
	r := rand.New(rand.NewPCG(1, 2))
	parts := []string{"password", "Passwd", "pwd", "secret", "client_secret", "TOKEN", "api-key", "access-key", "auth_key", "authz", "'", "\"", " ", "  ", "\t", "\v", "=", ":", "=>", ":=", "aB3dE5gH7jK9mN2pQ4sT6vW", "x", "-", "_", "://", "user", ":", "p4ssW0rdXyz", "@", "host.com", "/", "SK", "0123456789abcdef0123456789ABCDEF", "sk", "Sk", "<", ">", "`"}
	for range 50000 {
		var b []byte
		for range 1 + r.IntN(10) {
			b = append(b, parts[r.IntN(len(parts))]...)
		}
		texts = append(texts, b)
	}
	run := func(text []byte, slow bool) []string {
		rules := secretRules
		if slow {
			rules = slices.Clone(secretRules)
			for i := range rules {
				rules[i].maybe = nil
			}
		}
		var out []string
		src := NewText(text)
		var at [][]int
		secretKeywords.each(src.Data, func(rule, off int) {
			if at == nil {
				at = make([][]int, len(rules))
			}
			at[rule] = append(at[rule], off)
		})
		for i, offs := range at {
			if len(offs) > 0 {
				rules[i].scan(src, offs, nil, func(l, c int, _ Severity, m string) { out = append(out, fmt.Sprint(l, c, m)) })
			}
		}
		return out
	}
	n := 0
	for _, text := range texts {
		a, b := run(text, true), run(text, false)
		n += len(a)
		if !slices.Equal(a, b) {
			t.Fatalf("%q:\nslow %v\nfast %v", text, a, b)
		}
	}
	if n < 100 {
		t.Fatalf("%d findings in %d texts: the lines test nothing", n, len(texts))
	}
}

// The keyword index finds every keyword of every rule, in any case, where
// a comparison at each offset does.
func TestKeywordIndexFindsEveryKeyword(t *testing.T) {
	var keywords []string
	for _, rule := range secretRules {
		keywords = append(keywords, rule.keywords...)
	}
	r := rand.New(rand.NewPCG(9, 10))
	others := []string{" ", "x", "_", "-", ":", "é", "\xff", "\n", "0"}
	for range 20000 {
		var b []byte
		for range 1 + r.IntN(8) {
			piece := others[r.IntN(len(others))]
			if r.IntN(2) == 0 {
				piece = keywords[r.IntN(len(keywords))]
				cut := r.IntN(len(piece) + 1) // whole, or a prefix
				if r.IntN(3) > 0 {
					cut = len(piece)
				}
				piece = piece[:cut]
			}
			for _, c := range []byte(piece) {
				if r.IntN(2) == 0 && 'a' <= c && c <= 'z' {
					c -= 'a' - 'A'
				}
				b = append(b, c)
			}
		}
		var got, want []string
		secretKeywords.each(b, func(rule, off int) { got = append(got, fmt.Sprint(off, rule)) })
		for off := range b {
			for i, rule := range secretRules {
				for _, kw := range rule.keywords {
					if hasPrefixFold(b[off:], []byte(kw)) {
						want = append(want, fmt.Sprint(off, i))
					}
				}
			}
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("%q: found %v, want %v", b, got, want)
		}
	}
}
