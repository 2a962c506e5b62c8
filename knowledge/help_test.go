package knowledge

import (
	"strings"
	"testing"
)

// The help names every kind and every key, so that a new one documents
// itself.
func TestHelpNamesEverything(t *testing.T) {
	help := KindsHelp()
	for _, k := range kinds {
		if !strings.Contains(help, "   "+k.Name+" ") || !strings.Contains(help, k.Description) || !strings.Contains(help, k.Expiry) {
			t.Errorf("kind %s is not documented:\n%s", k.Name, help)
		}
	}
	for _, key := range keys {
		if !strings.Contains(help, "   "+key.Name+" ") || !strings.Contains(help, key.Doc) {
			t.Errorf("key %s is not documented", key.Name)
		}
	}
	filters := FilterHelp("")
	for _, k := range MetaKeys() {
		if k.Filter != strings.Contains(filters, k.Name+":VALUE") {
			t.Errorf("filter help of %s: %q", k.Name, filters)
		}
	}
	if got := KindList("or"); got != "context, memory, article or topic" {
		t.Errorf("KindList = %q", got)
	}
}

// Every kind names keys the registry defines, and every kind but one has
// a place of its own.
func TestRegistryIsConsistent(t *testing.T) {
	catchAll := 0
	for _, k := range kinds {
		for _, key := range append(append([]string{}, k.Required...), k.Optional...) {
			if _, ok := LookupKey(key); !ok {
				t.Errorf("kind %s names unknown key %s", k.Name, key)
			}
		}
		if k.Dir == "" && k.File == "" {
			catchAll++
		}
		if k.Description == "" || k.Place == "" || k.ID == "" || k.Expiry == "" {
			t.Errorf("kind %s is not described", k.Name)
		}
		if got, ok := LookupKind(k.Name); !ok || got.Name != k.Name {
			t.Errorf("LookupKind(%s)", k.Name)
		}
	}
	if catchAll != 1 {
		t.Errorf("%d kinds take what no other kind claims, want 1", catchAll)
	}
	seen := map[string]bool{}
	for _, key := range keys {
		if seen[key.Name] || key.Doc == "" {
			t.Errorf("key %s is defined twice or undocumented", key.Name)
		}
		seen[key.Name] = true
		if key.Filter && !key.Meta {
			t.Errorf("key %s is a filter but not a Meta key", key.Name)
		}
	}
	if !IsFilter("owner") || !IsFilter("OWNER") || IsFilter("tags") || IsFilter("nope") {
		t.Error("IsFilter")
	}
}
