package access

import "testing"

func TestMatches(t *testing.T) {
	for _, c := range []struct {
		pattern, name string
		want          bool
	}{
		{"github.com/acme/api", "github.com/acme/api", true},
		{"github.com/acme/api", "github.com/acme/api2", false},
		{"github.com/acme/*", "github.com/acme/api", true},
		{"github.com/acme/*", "github.com/acme/team/api", true},
		{"github.com/acme/*", "github.com/acmeco/api", false},
		{"*", "anything", true},
		{"*/api", "github.com/acme/api", true},
		{"*/api", "github.com/acme/apis", false},
		{"github.com/*/api*", "github.com/acme/api-v2", true},
		{"a*b*c", "abc", true},
		{"a*b*c", "acb", false},
		{"a_b", "axb", false}, // only * is special
	} {
		if got := Matches(c.pattern, c.name); got != c.want {
			t.Errorf("Matches(%q, %q) = %v", c.pattern, c.name, got)
		}
	}
}

func TestMayRead(t *testing.T) {
	p := &Policy{
		Grants: []Grant{{"user:ada", "github.com/acme/secret"}, {"group:platform", "github.com/acme/*"}},
		Visibility: map[string]string{"github.com/acme/secret": Private, "github.com/acme/ops": Private,
			"github.com/acme/handbook": Internal, "github.com/acme/site": Public, "github.com/other/x": Private},
	}
	ada := &Principal{Name: "user:ada"}
	bob := &Principal{Name: "user:bob", Groups: []string{"group:platform"}}
	eve := &Principal{Name: "user:eve"}
	gh := &Principal{Name: "user:gh", GitHub: map[string]bool{"github.com/acme/ops": true}, Via: "github"}
	for _, c := range []struct {
		who  *Principal
		repo string
		want bool
	}{
		{nil, "github.com/acme/secret", true},
		{ada, "github.com/acme/secret", true},
		{ada, "github.com/acme/ops", false},
		{ada, "github.com/acme/handbook", true},
		{ada, "local", true}, // not in the database: internal
		{bob, "github.com/acme/ops", true},
		{bob, "github.com/other/x", false},
		{eve, "github.com/acme/secret", false},
		{eve, "github.com/acme/site", true},
		{gh, "github.com/acme/ops", true},
		{gh, "github.com/acme/handbook", false}, // exactly GitHub's answer
		{gh, "github.com/acme/site", true},
	} {
		name := "nobody"
		if c.who != nil {
			name = c.who.Name
		}
		if got := p.MayRead(c.who, c.repo); got != c.want {
			t.Errorf("%s reads %s: %v", name, c.repo, got)
		}
	}
}
