package reponame

import (
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	for _, ok := range []string{"github.com/org/api", "api", "gitlab.example.org/a-b_c.d", "dépôt"} {
		if err := Check(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "a b", "a:b", "a=b", "a\x1bb", "a\ab", "api\u200b", "\u202eipa", "a\ufeffb", "a\ufffdb", "\xff", strings.Repeat("x", Max+1)} {
		err := Check(bad)
		if err == nil {
			t.Errorf("%q was accepted", bad)
			continue
		}
		if strings.ContainsAny(err.Error(), "\x1b\a\u200b\u202e\ufeff") {
			t.Errorf("%q: the message holds the character raw: %q", bad, err)
		}
	}
}
