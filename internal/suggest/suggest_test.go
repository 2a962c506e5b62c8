package suggest

import "testing"

func TestEditDistance(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		d    int
	}{{"search", "search", 0}, {"serach", "search", 1}, {"serch", "search", 1}, {"get", "list", 3}, {"", "abc", 3}, {"café", "cafe", 1}} {
		if d := editDistance(tt.a, tt.b); d != tt.d {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tt.a, tt.b, d, tt.d)
		}
	}
	if s := Closest("lst", []string{"list", "get"}); s != "list" {
		t.Errorf("Closest(lst) = %q", s)
	}
	if s := Closest("xyz", []string{"list", "get"}); s != "" {
		t.Errorf("Closest(xyz) = %q, want none", s)
	}
}
