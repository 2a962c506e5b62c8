package kbccli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/kbqdev/kbq/internal/cli"
	"github.com/kbqdev/kbq/internal/postgres/pgstore"
)

// githubVisibility asks GitHub's API ($GITHUB_API_URL, else
// api.github.com) how the repository published as name
// (HOST/OWNER/NAME) is visible: public, internal or private. The token
// is $GITHUB_TOKEN, the user's own: a repository never names it.
func githubVisibility(ctx context.Context, getenv func(string) string, name string) (string, error) {
	api := strings.TrimSuffix(getenv("GITHUB_API_URL"), "/")
	if api == "" {
		api = "https://api.github.com"
	}
	u, err := url.Parse(api)
	if err != nil || u.Host == "" {
		return "", cli.Usagef("GITHUB_API_URL %q is not a URL", api)
	}
	host := u.Hostname()
	if host == "api.github.com" {
		host = "github.com"
	}
	owner, rest, ok := strings.Cut(strings.TrimPrefix(name, host+"/"), "/")
	if !ok || !strings.HasPrefix(name, host+"/") || strings.Contains(rest, "/") {
		return "", cli.Usagef("--visibility github: %s is not a repository of %s (HOST/OWNER/NAME); give --visibility public, internal or private", name, host)
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, api+"/repos/"+url.PathEscape(owner)+"/"+url.PathEscape(rest), nil)
	if err != nil {
		return "", err
	}
	req.Header.Set("Accept", "application/vnd.github+json")
	if token := getenv("GITHUB_TOKEN"); token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", fmt.Errorf("--visibility github: ask %s: %w", u.Host, err)
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusNotFound, http.StatusUnauthorized, http.StatusForbidden:
		return "", fmt.Errorf("--visibility github: %s does not show %s/%s to this token (%s): set GITHUB_TOKEN to one that can read it, or give --visibility public, internal or private", u.Host, owner, rest, resp.Status)
	default:
		return "", fmt.Errorf("--visibility github: %s answered %s", u.Host, resp.Status)
	}
	var repo struct {
		Visibility string `json:"visibility"`
		Private    bool   `json:"private"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&repo); err != nil {
		return "", fmt.Errorf("--visibility github: %s's answer is not a repository: %v", u.Host, err)
	}
	vis := repo.Visibility
	if vis == "" { // GitHub Enterprise Server before 3.x says private only
		vis = map[bool]string{true: "private", false: "public"}[repo.Private]
	}
	if !slices.Contains(pgstore.Visibilities, vis) {
		return "", fmt.Errorf("--visibility github: GitHub says %q, which kbq does not know", vis)
	}
	return vis, nil
}
