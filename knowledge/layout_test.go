package knowledge

import "testing"

func TestScopes(t *testing.T) {
	for _, tt := range []struct {
		scope, dir string
		contains   bool
		depth      int
	}{
		{"global", "x/y", true, 0},
		{"project", "", true, 1},
		{"services/api", "services/api/x", true, 3},
		{"services/api", "services/apix", false, 3},
		{"services/api", "services", false, 3},
		{"./global", "global/x", true, 2},
	} {
		if got := ScopeContains(tt.scope, tt.dir); got != tt.contains {
			t.Errorf("ScopeContains(%q, %q) = %v", tt.scope, tt.dir, got)
		}
		if got := ScopeDepth(tt.scope); got != tt.depth {
			t.Errorf("ScopeDepth(%q) = %d, want %d", tt.scope, got, tt.depth)
		}
	}
	if ScopeName("global") != "./global" || ScopeName("") != "project" || ScopeName("a/b") != "a/b" {
		t.Error("ScopeName")
	}
}
