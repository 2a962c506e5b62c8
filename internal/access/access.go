// Package access decides who may read which repository: a Principal (who
// is asking, as the door identified them), the Grants kept in the
// database (kbc grant), and each repository's visibility. kbq serve asks
// it before ranking, so that a caller's search runs over the repositories
// it may read and no other; PostgreSQL applies the same rules to database
// roles by row-level security (package pgstore).
package access

import (
	"slices"
	"strings"
)

// Visibilities of a repository.
const (
	Public   = "public"
	Internal = "internal"
	Private  = "private"
)

// A Principal is who is asking.
type Principal struct {
	// Name is user:NAME (or role:PGROLE).
	Name string
	// Groups are group:NAME, each.
	Groups []string
	// GitHub, when not nil, holds the repositories (as host/owner/name,
	// lowercased) the caller's GitHub token can read: such a caller reads
	// exactly those, and public ones.
	GitHub map[string]bool
	// Via names how it was identified: oidc, github or token.
	Via string
}

// Is reports whether the principal is name or in group name.
func (p *Principal) Is(name string) bool {
	return p.Name == name || slices.Contains(p.Groups, name)
}

// A Grant lets Principal (user:, group: or role:) read the repositories
// Pattern names.
type Grant struct {
	Principal string `json:"principal"`
	Pattern   string `json:"pattern"`
}

// Matches reports whether pattern names repository name: equal, or with
// each * standing for any run of characters.
func Matches(pattern, name string) bool {
	parts := strings.Split(pattern, "*")
	if len(parts) == 1 {
		return name == pattern
	}
	if !strings.HasPrefix(name, parts[0]) {
		return false
	}
	rest := name[len(parts[0]):]
	for _, part := range parts[1 : len(parts)-1] {
		i := strings.Index(rest, part)
		if i < 0 {
			return false
		}
		rest = rest[i+len(part):]
	}
	return strings.HasSuffix(rest, parts[len(parts)-1])
}

// A Policy is the grants and the repositories' visibility in force.
type Policy struct {
	Grants []Grant
	// Visibility is each repository's, by name; a repository it does not
	// name (an artifact served from disk) is internal.
	Visibility map[string]string
}

// MayRead reports whether who may read repository repo. A nil who is
// every caller of a server that asks no one who they are.
func (p *Policy) MayRead(who *Principal, repo string) bool {
	if who == nil {
		return true
	}
	vis := Internal
	if p != nil {
		if v, ok := p.Visibility[repo]; ok {
			vis = v
		}
	}
	if vis == Public {
		return true
	}
	if who.GitHub != nil {
		return who.GitHub[strings.ToLower(repo)]
	}
	if vis == Internal {
		return true
	}
	if p == nil {
		return false
	}
	for _, g := range p.Grants {
		if who.Is(g.Principal) && Matches(g.Pattern, repo) {
			return true
		}
	}
	return false
}
