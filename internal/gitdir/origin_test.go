package gitdir

import (
	"os"
	"path/filepath"
	"testing"
)

func TestRepoName(t *testing.T) {
	for url, want := range map[string]string{
		"git@github.com:org/repo.git":            "github.com/org/repo",
		"https://github.com/org/repo":            "github.com/org/repo",
		"https://user:pw@gitlab.com/g/sub/x.git": "gitlab.com/g/sub/x",
		"ssh://git@example.com:2222/team/kb.git": "example.com/team/kb",
		"file:///srv/git/kb.git":                 "kb",
		"/srv/git/kb.git":                        "kb",
		"../kb":                                  "kb",
		"":                                       "",
	} {
		if got := RepoName(url); got != want {
			t.Errorf("RepoName(%q) = %q, want %q", url, got, want)
		}
	}
}

func TestOrigin(t *testing.T) {
	dir := t.TempDir()
	git := filepath.Join(dir, ".git")
	os.MkdirAll(git, 0o755)
	config := "[core]\n\tbare = false\n[remote \"upstream\"]\n\turl = https://x/up\n[remote \"origin\"]\n\turl = git@github.com:org/kb.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n"
	os.WriteFile(filepath.Join(git, "config"), []byte(config), 0o644)
	d, err := Find(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := d.Origin(); got != "git@github.com:org/kb.git" {
		t.Errorf("Origin = %q", got)
	}
}

func TestIsLocalURL(t *testing.T) {
	for url, want := range map[string]bool{
		"/home/me/src/repo": true, "../repo": true, "repo": true, "file:///srv/git/repo.git": true, `C:\src\repo`: true, "C:/src/repo": true,
		"git@github.com:org/repo.git": false, "https://github.com/org/repo": false, "ssh://git@host:22/org/repo": false, "host:org/repo": false,
	} {
		if got := IsLocalURL(url); got != want {
			t.Errorf("IsLocalURL(%q) = %v, want %v", url, got, want)
		}
	}
}
