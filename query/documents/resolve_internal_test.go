package documents

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/kbqdev/kbq/artifact"
)

// Over repositories read as one, a reference resolves in the repository
// it names, or in the one repository that has it, whether each
// repository's documents come together (as a union lists them) or not.
func TestResolveAcrossRepositories(t *testing.T) {
	together := []artifact.Document{
		{Path: "api:.kb/keys.md", Topic: "keys", Scope: "project", Kind: "topic"},
		{Path: "api:.kb/deploy.md", Topic: "deploy", Scope: "project", Kind: "topic"},
		{Path: "web:.kb/keys.md", Topic: "keys", Scope: "project", Kind: "topic"},
		{Path: "web:.kb/site.md", Topic: "site", Scope: "project", Kind: "topic"},
	}
	apart := []artifact.Document{together[0], together[2], together[1], together[3]}
	for name, docs := range map[string][]artifact.Document{"together": together, "apart": apart} {
		for ref, want := range map[string]string{
			"api:keys": "api:.kb/keys.md", "web:.kb/keys.md": "web:.kb/keys.md", "deploy": "api:.kb/deploy.md",
			"site": "web:.kb/site.md", "api:.kb/deploy.md": "api:.kb/deploy.md",
		} {
			d, err := resolve(docs, []string{"api", "web"}, ref, "")
			if err != nil || d.Path != want {
				t.Errorf("%s: resolve(%q) = %q, %v; want %s", name, ref, d.Path, err, want)
			}
		}
		if _, err := resolve(docs, []string{"api", "web"}, "keys", ""); !errors.Is(err, ErrNotFound) {
			t.Errorf("%s: keys, in both repositories, resolved: %v", name, err)
		}
		if _, err := resolve(docs, []string{"api", "web"}, "web:deploy", ""); !errors.Is(err, ErrNotFound) {
			t.Errorf("%s: web:deploy resolved: %v", name, err)
		}
		// In no repository: the last one looked in tells the name nearest.
		if _, err := resolve(docs, []string{"api", "web"}, "sitee", ""); err == nil || !strings.Contains(err.Error(), "did you mean site?") {
			t.Errorf("%s: sitee: %v, want a suggestion of site", name, err)
		}
	}
	if !slices.Equal(paths(together[:2]), []string{"api:.kb/keys.md", "api:.kb/deploy.md"}) {
		t.Error("the documents were changed")
	}
}
