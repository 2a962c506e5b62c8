package kbqserve

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/kbqdev/kbq/internal/access"
)

// isGitHubToken reports whether token is shaped as GitHub's are: an OAuth
// app's (gho_), a GitHub App's user token (ghu_), a personal access
// token, classic (ghp_) or fine-grained (github_pat_).
func isGitHubToken(token string) bool {
	for _, p := range []string{"gho_", "ghu_", "ghp_", "github_pat_"} {
		if strings.HasPrefix(token, p) {
			return true
		}
	}
	return false
}

// githubClient asks GitHub's REST API (github.com's, or a GitHub
// Enterprise Server's, by base URL) which repositories a token can read,
// and keeps the answer for a while, keyed by a hash of the token, never
// the token.
type githubClient struct {
	api  *url.URL
	host string // the repositories' host: github.com for api.github.com
	ttl  time.Duration
	http *http.Client

	mu    sync.Mutex
	cache map[[sha256.Size]byte]githubEntry
	// inflight holds the asks under way, so that a token's first requests
	// ask once.
	inflight map[[sha256.Size]byte]*githubAsk
}

type githubEntry struct {
	p     *access.Principal
	until time.Time
}

type githubAsk struct {
	done chan struct{}
	p    *access.Principal
	err  error
}

// maxGitHubTokens bounds the tokens whose answers are kept.
const maxGitHubTokens = 10000

func newGitHubClient(api string, ttl time.Duration) (*githubClient, error) {
	u, err := url.Parse(strings.TrimSuffix(api, "/"))
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("%q is not an http(s) URL of GitHub's API (https://api.github.com, or https://HOST/api/v3 for GitHub Enterprise Server)", api)
	}
	host := u.Hostname()
	if host == "api.github.com" {
		host = "github.com"
	}
	if ttl <= 0 {
		ttl = 5 * time.Minute
	}
	return &githubClient{api: u, host: host, ttl: ttl, http: &http.Client{Timeout: 20 * time.Second},
		cache: map[[sha256.Size]byte]githubEntry{}, inflight: map[[sha256.Size]byte]*githubAsk{}}, nil
}

// errGitHub means GitHub could not say what a token may read (it is down,
// or the server's rate limit is spent): the caller is told to retry.
var errGitHub = errors.New("GitHub cannot say what this token may read now")

// principal is who token is on GitHub, with the repositories it can read,
// and until when that answer is kept.
func (c *githubClient) principal(ctx context.Context, token string) (*access.Principal, time.Time, error) {
	key := sha256.Sum256([]byte(token))
	c.mu.Lock()
	if e, ok := c.cache[key]; ok && time.Now().Before(e.until) {
		c.mu.Unlock()
		return e.p, e.until, nil
	}
	ask, asking := c.inflight[key]
	if !asking {
		ask = &githubAsk{done: make(chan struct{})}
		c.inflight[key] = ask
	}
	c.mu.Unlock()
	if !asking {
		// The ask outlives a caller that gives up: others wait on it.
		actx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		ask.p, ask.err = c.ask(actx, token)
		cancel()
		c.mu.Lock()
		delete(c.inflight, key)
		until := time.Now().Add(c.ttl)
		if ask.err == nil {
			if len(c.cache) >= maxGitHubTokens {
				c.cache = map[[sha256.Size]byte]githubEntry{}
			}
			c.cache[key] = githubEntry{ask.p, until}
		}
		c.mu.Unlock()
		close(ask.done)
	}
	select {
	case <-ask.done:
	case <-ctx.Done():
		return nil, time.Time{}, ctx.Err()
	}
	if ask.err != nil {
		return nil, time.Time{}, ask.err
	}
	return ask.p, time.Now().Add(c.ttl), nil
}

// ask asks GitHub who token is and which repositories it can read.
func (c *githubClient) ask(ctx context.Context, token string) (*access.Principal, error) {
	var user struct {
		Login string `json:"login"`
	}
	if _, err := c.get(ctx, token, c.api.String()+"/user", &user); err != nil {
		return nil, err
	}
	if user.Login == "" {
		return nil, fmt.Errorf("%w: GitHub named no user for it", errToken)
	}
	p := &access.Principal{Name: "user:" + user.Login, Via: "github", GitHub: map[string]bool{}}
	next := c.api.String() + "/user/repos?per_page=100&affiliation=owner,collaborator,organization_member"
	for pages := 0; next != "" && pages < 100; pages++ {
		var repos []struct {
			FullName string `json:"full_name"`
		}
		link, err := c.get(ctx, token, next, &repos)
		if err != nil {
			return nil, err
		}
		for _, r := range repos {
			p.GitHub[strings.ToLower(c.host+"/"+r.FullName)] = true
		}
		next = nextLink(link)
	}
	return p, nil
}

// get reads the JSON at u into v, returning the Link header.
func (c *githubClient) get(ctx context.Context, token, u string, v any) (string, error) {
	next, err := url.Parse(u)
	if err != nil || next.Host != c.api.Host || next.Scheme != c.api.Scheme {
		return "", fmt.Errorf("%w: GitHub's answer links elsewhere (%s)", errGitHub, u)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return "", err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Accept", "application/vnd.github+json")
	req.Header.Set("X-GitHub-Api-Version", "2022-11-28")
	resp, err := c.http.Do(req)
	if err != nil {
		return "", fmt.Errorf("%w: %v", errGitHub, err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusUnauthorized:
		return "", fmt.Errorf("%w: GitHub does not know it", auth.ErrInvalidToken)
	case (resp.StatusCode == http.StatusForbidden || resp.StatusCode == http.StatusTooManyRequests) && resp.Header.Get("X-RateLimit-Remaining") == "0":
		return "", fmt.Errorf("%w: its rate limit is spent until %s", errGitHub, resp.Header.Get("X-RateLimit-Reset"))
	case resp.StatusCode != http.StatusOK:
		return "", fmt.Errorf("%w: %s answered %s", errGitHub, c.api.Host, resp.Status)
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 16<<20)).Decode(v); err != nil {
		return "", fmt.Errorf("%w: its answer is not JSON of the kind asked: %v", errGitHub, err)
	}
	return resp.Header.Get("Link"), nil
}

// nextLink is the rel="next" URL of a Link header, "" when there is none.
func nextLink(link string) string {
	for _, part := range strings.Split(link, ",") {
		target, params, ok := strings.Cut(strings.TrimSpace(part), ";")
		if ok && strings.Contains(params, `rel="next"`) {
			return strings.Trim(strings.TrimSpace(target), "<>")
		}
	}
	return ""
}
