package kbqserve

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kbqdev/kbq/internal/access"
	"github.com/kbqdev/kbq/internal/cli"
	"github.com/kbqdev/kbq/internal/testkb"
	"github.com/kbqdev/kbq/query"
)

// issuer is an OIDC issuer on 127.0.0.1: a discovery document and the
// JWKS of its key, and tokens signed with it.
type issuer struct {
	srv  *httptest.Server
	key  *rsa.PrivateKey
	kid  string
	jwks atomic.Int32 // how many times the keys were fetched
}

func newIssuer(t *testing.T) *issuer {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	is := &issuer{key: key, kid: "test-key-1"}
	mux := http.NewServeMux()
	is.srv = httptest.NewServer(mux)
	t.Cleanup(is.srv.Close)
	mux.HandleFunc("/.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]any{
			"issuer": is.srv.URL, "jwks_uri": is.srv.URL + "/jwks",
			"authorization_endpoint": is.srv.URL + "/auth", "token_endpoint": is.srv.URL + "/token",
			"id_token_signing_alg_values_supported": []string{"RS256"},
		})
	})
	mux.HandleFunc("/jwks", func(w http.ResponseWriter, r *http.Request) {
		is.jwks.Add(1)
		json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &key.PublicKey, KeyID: is.kid, Algorithm: "RS256", Use: "sig"}}})
	})
	return is
}

// token signs claims, filled with the issuer's defaults.
func (is *issuer) token(t *testing.T, claims map[string]any) string {
	t.Helper()
	full := map[string]any{"iss": is.srv.URL, "aud": "https://kbq.test/mcp", "sub": "ada", "exp": time.Now().Add(time.Hour).Unix(), "iat": time.Now().Unix()}
	for k, v := range claims {
		if v == nil {
			delete(full, k)
		} else {
			full[k] = v
		}
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: is.key}, (&jose.SignerOptions{}).WithHeader("kid", is.kid).WithType("JWT"))
	if err != nil {
		t.Fatal(err)
	}
	payload, _ := json.Marshal(full)
	sig, err := signer.Sign(payload)
	if err != nil {
		t.Fatal(err)
	}
	s, err := sig.CompactSerialize()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// servedRepos serves repositories as a database would, with policy.
func servedRepos(t *testing.T, policy access.Policy, repos map[string]testkb.Files) *served {
	t.Helper()
	tl := &served{usage: newUsage(&cli.Streams{Err: io.Discard, Getenv: func(k string) string {
		return map[string]string{"XDG_STATE_HOME": t.TempDir(), "KBQ_USAGE": "off"}[k]
	}}), policy: policy}
	for name, fs := range repos {
		live, err := query.OpenLive(testkb.Build(t, fs), query.DefaultRanking())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { live.Close() })
		tl.many = append(tl.many, namedLive{name, live, 0})
	}
	return tl
}

var orgRepos = map[string]testkb.Files{
	"github.com/acme/secret":   {".kb/launch.md": "# Launch\n\nThe launch of the rocket is on the ninth.\n"},
	"github.com/acme/handbook": {".kb/deploy.md": "# Deploy\n\nEveryone deploys the rocket with make deploy.\n"},
	"github.com/acme/site":     {".kb/site.md": "# Site\n\nThe public site about the rocket.\n"},
}

var orgPolicy = access.Policy{
	Grants: []access.Grant{{Principal: "group:launch", Pattern: "github.com/acme/secret"}},
	Visibility: map[string]string{"github.com/acme/secret": access.Private, "github.com/acme/handbook": access.Internal,
		"github.com/acme/site": access.Public},
}

// kbq serve with an OIDC issuer: tokens of the issuer, for this server,
// unexpired and signed by its key are accepted, each caller reading what
// its groups are granted; anything else is 401 with the resource
// metadata's URL.
func TestOIDCTokens(t *testing.T) {
	is := newIssuer(t)
	tl := servedRepos(t, orgPolicy, orgRepos)
	var audit strings.Builder
	tl.audit = &auditLog{w: &audit}
	o := &serveOptions{auth: authOptions{oidcIssuer: is.srv.URL, oidcAudience: "https://kbq.test/mcp"}}
	var err error
	if o.ident, err = newIdentifier(&o.auth); err != nil {
		t.Fatal(err)
	}
	h := newHandler(tl, o, false)
	bearer := func(tok string) map[string]string { return map[string]string{"Authorization": "Bearer " + tok} }

	launch := is.token(t, map[string]any{"groups": []string{"launch"}})
	code, body := get(t, h, "/search?q=rocket", bearer(launch))
	if code != 200 || !strings.Contains(body, "github.com/acme/secret") || !strings.Contains(body, "github.com/acme/site") {
		t.Errorf("a caller of group launch: %d %s", code, body)
	}
	plain := is.token(t, map[string]any{"sub": "bob"})
	code, body = get(t, h, "/search?q=rocket", bearer(plain))
	if code != 200 || strings.Contains(body, "secret") || strings.Contains(body, "ninth") || !strings.Contains(body, "handbook") {
		t.Errorf("a caller of no group: %d %s", code, body)
	}
	if !strings.Contains(audit.String(), `"principal":"user:bob","via":"oidc","door":"http","op":"search"`) || strings.Contains(audit.String(), "rocket") {
		t.Errorf("audit log:\n%s", audit.String())
	}
	// The keys are fetched once for every good token of the issuer.
	for i := range 5 {
		get(t, h, "/search?q=rocket", bearer(is.token(t, map[string]any{"sub": fmt.Sprint("user", i)})))
	}
	if n := is.jwks.Load(); n != 1 {
		t.Errorf("the JWKS was fetched %d times for 7 good tokens", n)
	}

	// Refused: each with 401 and where to learn what to bring.
	tampered := []byte(launch)
	tampered[len(tampered)/2] ^= 1
	unsigned := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","typ":"JWT"}`)) + "." +
		base64.RawURLEncoding.EncodeToString([]byte(fmt.Sprintf(`{"iss":%q,"aud":"https://kbq.test/mcp","sub":"eve","exp":%d}`, is.srv.URL, time.Now().Add(time.Hour).Unix()))) + "."
	other := newIssuer(t)
	for name, tok := range map[string]string{
		"expired":        is.token(t, map[string]any{"exp": time.Now().Add(-time.Hour).Unix()}),
		"wrong audience": is.token(t, map[string]any{"aud": "https://elsewhere.test"}),
		"wrong issuer":   is.token(t, map[string]any{"iss": "https://evil.test"}),
		"other key":      other.token(t, map[string]any{"iss": is.srv.URL}),
		"alg none":       unsigned,
		"tampered":       string(tampered),
		"garbage":        "not-a-token",
	} {
		req := httptest.NewRequest("GET", "/search?q=rocket", nil)
		req.Host = "127.0.0.1:7419"
		req.Header.Set("Authorization", "Bearer "+tok)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != 401 || !strings.Contains(rec.Header().Get("WWW-Authenticate"), `resource_metadata="https://kbq.test/.well-known/oauth-protected-resource/mcp"`) {
			t.Errorf("%s: %d %q %s", name, rec.Code, rec.Header().Get("WWW-Authenticate"), rec.Body.String())
		}
		if strings.Contains(rec.Body.String(), "acme") {
			t.Errorf("%s: the refusal names a repository: %s", name, rec.Body.String())
		}
	}
	if code, body := get(t, h, "/search?q=rocket", nil); code != 401 {
		t.Errorf("no token: %d %s", code, body)
	}
	code, body = get(t, h, "/.well-known/oauth-protected-resource/mcp", nil)
	if code != 200 || !strings.Contains(body, `"resource":"https://kbq.test/mcp"`) || !strings.Contains(body, is.srv.URL) {
		t.Errorf("resource metadata: %d %s", code, body)
	}
	if code, body := get(t, h, "/healthz", nil); code != 200 || body != "{\"status\":\"ok\"}\n" {
		t.Errorf("healthz says more than whether it serves: %s", body)
	}
}

// kbq serve with a token file: each token its principal and groups; the
// file is checked line by line.
func TestStaticTokens(t *testing.T) {
	dir := t.TempDir()
	sum := func(s string) string { h := sha256.Sum256([]byte(s)); return hex.EncodeToString(h[:]) }
	file := filepath.Join(dir, "tokens")
	os.WriteFile(file, []byte("# the launch team\nsha256:"+sum("s3cret-launch")+" user:ada group:launch\n\nsha256:"+sum("s3cret-bob")+" user:bob\n"), 0o600)
	tl := servedRepos(t, orgPolicy, orgRepos)
	o := &serveOptions{auth: authOptions{tokensFile: file}}
	var err error
	if o.ident, err = newIdentifier(&o.auth); err != nil {
		t.Fatal(err)
	}
	h := newHandler(tl, o, false)
	if _, body := get(t, h, "/search?q=launch+ninth", map[string]string{"Authorization": "Bearer s3cret-launch"}); !strings.Contains(body, "github.com/acme/secret") {
		t.Errorf("ada: %s", body)
	}
	if code, body := get(t, h, "/get?ref=github.com/acme/secret:launch", map[string]string{"Authorization": "Bearer s3cret-bob"}); code != 404 || strings.Contains(body, "ninth") {
		t.Errorf("bob gets the secret: %d %s", code, body)
	}
	if code, _ := get(t, h, "/search?q=x", map[string]string{"Authorization": "Bearer s3cret-eve"}); code != 401 {
		t.Errorf("an unknown token: %d", code)
	}
	for name, text := range map[string]string{
		"short hash":  "sha256:abcd user:a\n",
		"no user":     "sha256:" + sum("x") + " group:a\n",
		"bad group":   "sha256:" + sum("x") + " user:a team:b\n",
		"twice":       "sha256:" + sum("x") + " user:a\nsha256:" + sum("x") + " user:b\n",
		"no token":    "# nothing\n",
		"plain token": "s3cret user:a\n",
	} {
		os.WriteFile(file, []byte(text), 0o600)
		if _, err := readTokens(file); err == nil || !strings.Contains(err.Error(), file) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// githubStandIn is GitHub's REST API on 127.0.0.1: /user and /user/repos,
// paginated through Link, for the tokens it knows.
func githubStandIn(t *testing.T, asked *atomic.Int32) *httptest.Server {
	t.Helper()
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		switch tok {
		case "ghp_launch", "ghp_plain":
		case "ghp_limited":
			w.Header().Set("X-RateLimit-Remaining", "0")
			w.Header().Set("X-RateLimit-Reset", "1700000000")
			http.Error(w, `{"message":"API rate limit exceeded"}`, http.StatusForbidden)
			return
		default:
			http.Error(w, `{"message":"Bad credentials"}`, http.StatusUnauthorized)
			return
		}
		switch r.URL.Path {
		case "/user":
			json.NewEncoder(w).Encode(map[string]any{"login": strings.TrimPrefix(tok, "ghp_")})
		case "/user/repos":
			// Page 1 holds 100 other repositories; page 2, for the
			// launch token, the private one.
			var repos []map[string]any
			if r.URL.Query().Get("page") == "2" {
				if tok == "ghp_launch" {
					repos = append(repos, map[string]any{"full_name": "acme/Secret"})
				}
			} else {
				for i := range 100 {
					repos = append(repos, map[string]any{"full_name": fmt.Sprintf("someone/repo%d", i)})
				}
				w.Header().Set("Link", fmt.Sprintf(`<%s/user/repos?per_page=100&page=2>; rel="next", <%s/user/repos?per_page=100&page=2>; rel="last"`, srv.URL, srv.URL))
			}
			json.NewEncoder(w).Encode(repos)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// kbq serve with --github-api: a GitHub token reads exactly the published
// repositories it can read on GitHub (and public ones), asked once and
// kept; a token GitHub does not know is 401.
func TestGitHubTokens(t *testing.T) {
	var asked atomic.Int32
	gh := githubStandIn(t, &asked)
	repos := map[string]testkb.Files{
		"127.0.0.1/acme/secret":   orgRepos["github.com/acme/secret"],
		"127.0.0.1/acme/handbook": orgRepos["github.com/acme/handbook"],
		"127.0.0.1/acme/site":     orgRepos["github.com/acme/site"],
	}
	policy := access.Policy{Visibility: map[string]string{"127.0.0.1/acme/secret": access.Private,
		"127.0.0.1/acme/handbook": access.Internal, "127.0.0.1/acme/site": access.Public}}
	tl := servedRepos(t, policy, repos)
	o := &serveOptions{auth: authOptions{githubAPI: gh.URL, githubCache: time.Minute}}
	var err error
	if o.ident, err = newIdentifier(&o.auth); err != nil {
		t.Fatal(err)
	}
	h := newHandler(tl, o, false)
	bearer := func(tok string) map[string]string { return map[string]string{"Authorization": "Bearer " + tok} }
	start := time.Now()
	code, body := get(t, h, "/search?q=rocket", bearer("ghp_launch"))
	first := time.Since(start)
	if code != 200 || !strings.Contains(body, "127.0.0.1/acme/secret") || strings.Contains(body, "handbook") {
		t.Errorf("the launch token: %d %s", code, body)
	}
	t.Logf("first request of a GitHub token: %v", first)
	n := asked.Load()
	if n != 3 {
		t.Errorf("GitHub was asked %d times for a first request, want /user and two pages", n)
	}
	get(t, h, "/search?q=launch", bearer("ghp_launch"))
	if asked.Load() != n {
		t.Error("GitHub was asked again within the cache's time")
	}
	if _, body := get(t, h, "/search?q=rocket", bearer("ghp_plain")); strings.Contains(body, "secret") || !strings.Contains(body, "site") {
		t.Errorf("the plain token: %s", body)
	}
	if code, _ := get(t, h, "/search?q=rocket", bearer("ghp_unknown")); code != 401 {
		t.Errorf("a token GitHub does not know: %d", code)
	}
	if code, body := get(t, h, "/search?q=rocket", bearer("ghp_limited")); code == 200 || !strings.Contains(body, "rate limit") {
		t.Errorf("a spent rate limit: %d %s", code, body)
	}
	if nextLink(`<https://x/a?page=2>; rel="next", <https://x/a?page=9>; rel="last"`) != "https://x/a?page=2" || nextLink(`<https://x/a?page=9>; rel="last"`) != "" {
		t.Error("nextLink")
	}
}

// The MCP tools answer each caller from what it may read.
func TestMCPCallerReadsItsOwn(t *testing.T) {
	tl := servedRepos(t, orgPolicy, orgRepos)
	tl.authenticated = true
	s := newMCPServer(tl)
	for who, want := range map[*access.Principal]bool{
		{Name: "user:ada", Groups: []string{"group:launch"}, Via: "token"}: true,
		{Name: "user:bob", Via: "token"}:                                   false,
	} {
		res, _, err := tl.search(context.Background(), &mcp.CallToolRequest{Extra: &mcp.RequestExtra{TokenInfo: tokenInfo(who, time.Time{})}}, searchArgs{Query: "rocket ninth", N: 10})
		if err != nil {
			t.Fatal(err)
		}
		text := res.Content[0].(*mcp.TextContent).Text
		if strings.Contains(text, "acme/secret") != want {
			t.Errorf("%s: %s", who.Name, text)
		}
	}
	if _, _, err := tl.search(context.Background(), &mcp.CallToolRequest{}, searchArgs{Query: "rocket"}); err == nil {
		t.Error("a call without a caller was answered")
	}
	_ = s
}

// An org scope a caller may not read is not in force for it: neither its
// context nor its topics reach the caller.
func TestOrgScopeFollowsPermissions(t *testing.T) {
	tl := servedRepos(t, access.Policy{
		Grants:     []access.Grant{{Principal: "group:staff", Pattern: "github.com/acme/handbook"}},
		Visibility: map[string]string{"github.com/acme/handbook": access.Private, "github.com/acme/api": access.Internal},
	}, map[string]testkb.Files{
		"github.com/acme/api":      {".kb/context.md": "The api listens on 8080.\n", ".kb/keys.md": "# Keys\n\nRotate the api keys.\n"},
		"github.com/acme/handbook": {".kb/context.md": "Every change goes through review.\n", ".kb/incidents.md": "# Incidents\n\nDeclare an incident severity by impact.\n"},
	})
	for i := range tl.many {
		if tl.many[i].name == "github.com/acme/handbook" {
			tl.many[i].org = 1
		}
	}
	dir := t.TempDir()
	sum := func(s string) string { h := sha256.Sum256([]byte(s)); return hex.EncodeToString(h[:]) }
	file := filepath.Join(dir, "tokens")
	os.WriteFile(file, []byte("sha256:"+sum("ada")+" user:ada group:staff\nsha256:"+sum("bob")+" user:bob\n"), 0o600)
	o := &serveOptions{auth: authOptions{tokensFile: file}}
	var err error
	if o.ident, err = newIdentifier(&o.auth); err != nil {
		t.Fatal(err)
	}
	h := newHandler(tl, o, false)
	for token, want := range map[string]bool{"ada": true, "bob": false} {
		auth := map[string]string{"Authorization": "Bearer " + token}
		code, body := get(t, h, "/context?repo=github.com/acme/api", auth)
		if code != 200 || strings.Contains(body, "Organisation Context") != want || strings.Contains(body, "review") != want || !strings.Contains(body, "8080") {
			t.Errorf("%s's context: %d %s", token, code, body)
		}
		_, body = get(t, h, "/search?q=incident+severity", auth)
		if strings.Contains(body, "handbook") != want {
			t.Errorf("%s's search: %s", token, body)
		}
	}
}
