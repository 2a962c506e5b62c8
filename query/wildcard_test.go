package query

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

// wildcardRegexp is the regular expression a wildcard pattern stands for:
// the reference matchWildcard is held to.
func wildcardRegexp(pattern string) *regexp.Regexp {
	var b strings.Builder
	for _, r := range pattern {
		switch r {
		case '*':
			b.WriteString(".*")
		case '?':
			b.WriteString(".")
		default:
			b.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	return regexp.MustCompile("^(?:" + b.String() + ")$")
}

func checkWildcard(t *testing.T, pattern, term string) {
	t.Helper()
	want := wildcardRegexp(pattern).MatchString(term)
	if got := matchWildcard(pattern, []byte(term)); got != want {
		t.Errorf("matchWildcard(%q, %q) = %v, want %v", pattern, term, got, want)
	}
	if want && !strings.HasPrefix(term, wildcardPrefix(pattern)) {
		t.Errorf("%q matches %q but does not start with its prefix %q", term, pattern, wildcardPrefix(pattern))
	}
}

func TestMatchWildcard(t *testing.T) {
	for _, c := range [][2]string{
		{"deploy*", "deployment"}, {"deploy*", "deplo"}, {"*", ""}, {"?", ""}, {"?", "日"}, {"??", "日"},
		{"d?ploy", "déploy"}, {"d?ploy", "dxxploy"}, {"*ment", "deployment"}, {"*ment", "mentor"},
		{"a*b*c", "aXbYbZc"}, {"a*b*c", "aXbYbZ"}, {"a**", "a"}, {"*a*a*a*b", "aaaaaaaaaaaaaaaaaaaa"},
		{"k?s", "k\xffs"}, {"k?s", "k\xff\xfes"}, {"ab", "abc"}, {"abc", "ab"},
	} {
		checkWildcard(t, c[0], c[1])
	}
	alphabet := []string{"a", "b", "é", "日", "*", "?"}
	rng := rand.New(rand.NewPCG(1, 2))
	word := func(n int, ops bool) string {
		var b strings.Builder
		for range rng.IntN(n) {
			k := len(alphabet)
			if !ops {
				k -= 2
			}
			b.WriteString(alphabet[rng.IntN(k)])
		}
		return b.String()
	}
	for range 20000 {
		checkWildcard(t, word(7, true), word(9, false))
	}
}

func FuzzMatchWildcard(f *testing.F) {
	f.Add("d?p*y", "deploy")
	f.Fuzz(func(t *testing.T, pattern, term string) {
		// Index terms are valid UTF-8, and so are patterns the reference
		// reads as written: it turns invalid bytes into U+FFFD.
		if utf8.ValidString(pattern) && utf8.ValidString(term) {
			checkWildcard(t, pattern, term)
		}
	})
}
