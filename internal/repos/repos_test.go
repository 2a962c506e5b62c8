package repos

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestListRoundTrip(t *testing.T) {
	home := t.TempDir()
	env := func(k string) string {
		if k == "KBQ_HOME" {
			return home
		}
		return ""
	}
	l, err := Load(env)
	if err != nil || len(l.Repos) != 0 {
		t.Fatalf("empty: %v %v", l, err)
	}
	if err := l.Add(Repo{Name: "github.com/org/api", Path: "/src/api"}); err != nil {
		t.Fatal(err)
	}
	if err := l.Add(Repo{Name: "web", Path: "/src/web"}); err != nil {
		t.Fatal(err)
	}
	if err := l.Add(Repo{Name: "web", Path: "/src/other"}); err == nil || !strings.Contains(err.Error(), "already listed") {
		t.Errorf("a name twice: %v", err)
	}
	if err := l.Add(Repo{Name: "other", Path: "/src/web"}); err == nil {
		t.Error("a path twice")
	}
	if err := l.Save(); err != nil {
		t.Fatal(err)
	}
	l, err = Load(env)
	if err != nil || len(l.Repos) != 2 || l.Repos[0].Name != "github.com/org/api" || l.Repos[1].Path != "/src/web" {
		t.Fatalf("reloaded: %+v %v", l, err)
	}
	if _, err := l.Remove("nope"); err == nil || !strings.Contains(err.Error(), "listed: github.com/org/api, web") {
		t.Errorf("remove unknown: %v", err)
	}
	if r, err := l.Remove("/src/api"); err != nil || r.Name != "github.com/org/api" {
		t.Errorf("remove by path: %v %v", r, err)
	}
	for _, bad := range []string{"repos: [{name: x, path: relative}]\n", "repos: 3\n", "other: 1\n"} {
		os.WriteFile(filepath.Join(home, "repos.yaml"), []byte(bad), 0o644)
		if _, err := Load(env); err == nil {
			t.Errorf("%q loads", bad)
		}
	}
}
