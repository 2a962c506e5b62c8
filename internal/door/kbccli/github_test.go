package kbccli

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// --visibility github asks GitHub's API for the repository's visibility,
// with the user's token.
func TestGitHubVisibility(t *testing.T) {
	var auth string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth = r.Header.Get("Authorization")
		switch r.URL.Path {
		case "/repos/acme/api":
			w.Write([]byte(`{"full_name":"acme/api","private":true,"visibility":"internal"}`))
		case "/repos/acme/old":
			w.Write([]byte(`{"full_name":"acme/old","private":true}`))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	host = host[:strings.Index(host, ":")]
	env := map[string]string{"GITHUB_API_URL": srv.URL, "GITHUB_TOKEN": "ghs_x"}
	getenv := func(k string) string { return env[k] }
	for name, want := range map[string]string{host + "/acme/api": "internal", host + "/acme/old": "private"} {
		if got, err := githubVisibility(context.Background(), getenv, name); err != nil || got != want {
			t.Errorf("%s: %q %v, want %s", name, got, err, want)
		}
	}
	if auth != "Bearer ghs_x" {
		t.Errorf("the token was sent as %q", auth)
	}
	for _, name := range []string{host + "/acme/gone", "gitlab.com/acme/api", host + "/acme/a/b"} {
		if _, err := githubVisibility(context.Background(), getenv, name); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
