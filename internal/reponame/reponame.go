// Package reponame says what may name a repository that kbq reads with
// others (kbc publish --repo, kbq repos add --name, --index NAME=DIR, a
// database's rows): a name is printed in messages and results, typed in
// repo: filters and REPO:PATH references, and must look like itself, so
// it holds no space, control character, invisible or direction-changing
// character (U+200B, U+202E), no colon and no equals sign.
package reponame

import (
	"fmt"
	"unicode"
	"unicode/utf8"
)

// Max is the most bytes a name may have.
const Max = 200

// Check reports why name cannot name a repository, nil when it can.
func Check(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("the repository name is empty")
	case len(name) > Max:
		return fmt.Errorf("the repository name is %d bytes, over the %d it may have", len(name), Max)
	case !utf8.ValidString(name):
		return fmt.Errorf("the repository name %q is not UTF-8", name)
	}
	for _, r := range name {
		var what string
		switch {
		case unicode.IsSpace(r):
			what = "a space"
		case unicode.IsControl(r):
			what = "a control character"
		case unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Co, r) || r == unicode.ReplacementChar:
			what = "an invisible or formatting character"
		case r == ':' || r == '=':
			what = fmt.Sprintf("%q, which separates a name from a path", r)
		default:
			continue
		}
		return fmt.Errorf("the repository name %+q holds %s (U+%04X): name it like github.com/org/repo", name, what, r)
	}
	return nil
}
