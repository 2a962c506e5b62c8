package kbqserve

import (
	"bufio"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/kbqdev/kbq/internal/access"
	"github.com/kbqdev/kbq/internal/cli"
)

// authOptions are how kbq serve tells who is asking.
type authOptions struct {
	oidcIssuer, oidcAudience, oidcClaim string
	githubAPI                           string
	githubCache                         time.Duration
	tokensFile                          string
	insecureNoAuth                      bool
	audit                               string
	auditQueries                        bool
}

func (o *authOptions) flags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "oidc-issuer", Usage: "accept OAuth access tokens (JWTs) of the OIDC issuer at `URL`, verified through its discovery document and keys", Destination: &o.oidcIssuer},
		&cli.StringFlag{Name: "oidc-audience", Usage: "the audience `AUD` tokens must name: this server's resource URL", Destination: &o.oidcAudience},
		&cli.StringFlag{Name: "oidc-claim", Usage: "name callers by the token's claim `CLAIM` (default: sub)", Destination: &o.oidcClaim},
		&cli.StringFlag{Name: "github-api", Usage: "accept GitHub tokens, each reading what it can read on GitHub, asked of the API at `URL` (https://api.github.com for github.com)", Destination: &o.githubAPI},
		&cli.DurationFlag{Name: "github-cache", Usage: "keep what a GitHub token can read for `D`", Value: 5 * time.Minute, Destination: &o.githubCache},
		&cli.StringFlag{Name: "tokens", Usage: "accept the tokens of `FILE`: a line each, sha256:HEX user:NAME [group:G ...]", Destination: &o.tokensFile},
		&cli.BoolFlag{Name: "insecure-no-auth", Usage: "serve a non-loopback address to anyone who connects, asking no one who they are", Destination: &o.insecureNoAuth},
		&cli.StringFlag{Name: "audit", Usage: "log each authenticated request as a JSON line to `FILE` (- for stderr, the default; off for none)", Value: "-", Destination: &o.audit},
		&cli.BoolFlag{Name: "audit-queries", Usage: "put the query text in the audit log too", Destination: &o.auditQueries},
	}
}

// enabled reports whether callers are asked who they are.
func (o *authOptions) enabled() bool {
	return o.oidcIssuer != "" || o.githubAPI != "" || o.tokensFile != ""
}

// An identifier tells who presents a bearer token.
type identifier struct {
	tokens map[[sha256.Size]byte]*access.Principal
	github *githubClient
	oidc   *oidcVerifier
}

// newIdentifier reads the token file and sets up the verifiers o names.
func newIdentifier(o *authOptions) (*identifier, error) {
	id := &identifier{}
	if o.oidcIssuer != "" || o.oidcAudience != "" {
		if o.oidcIssuer == "" || o.oidcAudience == "" {
			return nil, cli.Usagef("--oidc-issuer and --oidc-audience go together: the issuer whose tokens are accepted, and the audience they must name")
		}
		id.oidc = &oidcVerifier{issuer: o.oidcIssuer, audience: o.oidcAudience, claim: o.oidcClaim}
	}
	if o.githubAPI != "" {
		gh, err := newGitHubClient(o.githubAPI, o.githubCache)
		if err != nil {
			return nil, cli.Usagef("--github-api: %v", err)
		}
		id.github = gh
	}
	if o.tokensFile != "" {
		tokens, err := readTokens(o.tokensFile)
		if err != nil {
			return nil, err
		}
		id.tokens = tokens
	}
	return id, nil
}

// errToken is what a caller whose token is refused is told: never why in
// more detail than the kind of token.
var errToken = fmt.Errorf("%w: the bearer token is not one this server accepts", auth.ErrInvalidToken)

// verify is the auth.TokenVerifier of the server: a token of the token
// file, a GitHub token, or an OIDC issuer's JWT, in that order.
func (id *identifier) verify(ctx context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
	if id.tokens != nil {
		if p := id.tokens[sha256.Sum256([]byte(token))]; p != nil {
			return tokenInfo(p, time.Time{}), nil
		}
	}
	if id.github != nil && isGitHubToken(token) {
		p, until, err := id.github.principal(ctx, token)
		if err != nil {
			return nil, err
		}
		return tokenInfo(p, until), nil
	}
	if id.oidc != nil && strings.Count(token, ".") == 2 {
		p, exp, err := id.oidc.principal(ctx, token)
		if err != nil {
			return nil, err
		}
		return tokenInfo(p, exp), nil
	}
	return nil, errToken
}

func tokenInfo(p *access.Principal, exp time.Time) *auth.TokenInfo {
	return &auth.TokenInfo{UserID: p.Name, Expiration: exp, Extra: map[string]any{principalKey: p}}
}

const principalKey = "kbq.principal"

// principalOf is who the token info names; nil without one.
func principalOf(ti *auth.TokenInfo) *access.Principal {
	if ti == nil {
		return nil
	}
	p, _ := ti.Extra[principalKey].(*access.Principal)
	return p
}

// who is the caller of an HTTP request or an MCP call (req may be nil):
// nil when the server asks no one.
func (t *served) who(ctx context.Context, req *mcp.CallToolRequest) (*access.Principal, error) {
	if !t.authenticated {
		return nil, nil
	}
	var ti *auth.TokenInfo
	if req != nil && req.Extra != nil {
		ti = req.Extra.TokenInfo
	}
	if ti == nil {
		ti = auth.TokenInfoFromContext(ctx)
	}
	if p := principalOf(ti); p != nil {
		return p, nil
	}
	return nil, errToken
}

// readTokens reads a token file: a line a token, sha256:HEX (the SHA-256
// of the token) and its principal user:NAME, then its groups, group:NAME
// each; blank lines and lines starting with # are left out.
func readTokens(name string) (map[[sha256.Size]byte]*access.Principal, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, cli.Usagef("--tokens: %v", err)
	}
	defer f.Close()
	out := map[[sha256.Size]byte]*access.Principal{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		bad := func(why string) error {
			return cli.Usagef("%s:%d: %s; a line is sha256:HEX user:NAME [group:G ...], HEX the SHA-256 of the token (printf %%s TOKEN | sha256sum)", name, n, why)
		}
		hexSum, ok := strings.CutPrefix(fields[0], "sha256:")
		sum, err := hex.DecodeString(hexSum)
		if !ok || err != nil || len(sum) != sha256.Size {
			return nil, bad("the first field is not sha256: and 64 hex digits")
		}
		if len(fields) < 2 || !strings.HasPrefix(fields[1], "user:") || len(fields[1]) == len("user:") {
			return nil, bad("no principal user:NAME after the hash")
		}
		p := &access.Principal{Name: fields[1], Via: "token"}
		for _, g := range fields[2:] {
			if !strings.HasPrefix(g, "group:") || len(g) == len("group:") {
				return nil, bad(fmt.Sprintf("%q is not group:NAME", g))
			}
			p.Groups = append(p.Groups, g)
		}
		key := [sha256.Size]byte(sum)
		if out[key] != nil {
			return nil, bad("the token is listed twice")
		}
		out[key] = p
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("--tokens %s: %w", name, err)
	}
	if len(out) == 0 {
		return nil, cli.Usagef("--tokens %s lists no token", name)
	}
	return out, nil
}

// oidcVerifier verifies the JWT access tokens of an OIDC issuer: its
// discovery document is read at the first token (again after a failure),
// its keys are cached by key id (go-oidc's RemoteKeySet), and a token
// verified is remembered until it expires.
type oidcVerifier struct {
	issuer, audience, claim string

	mu       sync.Mutex
	verifier *oidc.IDTokenVerifier
	seen     map[[sha256.Size]byte]verified
}

type verified struct {
	p   *access.Principal
	exp time.Time
}

// maxVerified bounds the tokens remembered.
const maxVerified = 10000

func (v *oidcVerifier) principal(ctx context.Context, token string) (*access.Principal, time.Time, error) {
	key := sha256.Sum256([]byte(token))
	v.mu.Lock()
	if s, ok := v.seen[key]; ok && time.Now().Before(s.exp) {
		v.mu.Unlock()
		return s.p, s.exp, nil
	}
	verifier := v.verifier
	v.mu.Unlock()
	if verifier == nil {
		// The provider outlives the request: its keys are fetched with
		// a context of its own.
		dctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		provider, err := oidc.NewProvider(oidc.ClientContext(dctx, http.DefaultClient), v.issuer)
		cancel()
		if err != nil {
			return nil, time.Time{}, fmt.Errorf("the OIDC issuer %s cannot be reached to verify tokens: %w", v.issuer, err)
		}
		verifier = provider.Verifier(&oidc.Config{ClientID: v.audience})
		v.mu.Lock()
		v.verifier = verifier
		v.mu.Unlock()
	}
	idt, err := verifier.Verify(ctx, token)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("%w: %v", errToken, err)
	}
	var claims map[string]any
	if err := idt.Claims(&claims); err != nil {
		return nil, time.Time{}, fmt.Errorf("%w: %v", errToken, err)
	}
	name := idt.Subject
	if v.claim != "" && v.claim != "sub" {
		name, _ = claims[v.claim].(string)
	}
	if name == "" {
		return nil, time.Time{}, fmt.Errorf("%w: it has no %s claim to name the caller by", errToken, cmp.Or(v.claim, "sub"))
	}
	p := &access.Principal{Name: "user:" + name, Via: "oidc"}
	if groups, ok := claims["groups"].([]any); ok {
		for _, g := range groups {
			if s, ok := g.(string); ok && s != "" {
				p.Groups = append(p.Groups, "group:"+s)
			}
		}
	}
	v.mu.Lock()
	if v.seen == nil || len(v.seen) >= maxVerified {
		v.seen = map[[sha256.Size]byte]verified{}
	}
	v.seen[key] = verified{p, idt.Expiry}
	v.mu.Unlock()
	return p, idt.Expiry, nil
}

// resourceMetadata is the server's Protected Resource Metadata (RFC 9728),
// which a 401 points MCP clients to.
func resourceMetadata(o *authOptions) *oauthex.ProtectedResourceMetadata {
	m := &oauthex.ProtectedResourceMetadata{Resource: o.oidcAudience, BearerMethodsSupported: []string{"header"},
		ResourceName: "kbq knowledge"}
	if o.oidcIssuer != "" {
		m.AuthorizationServers = []string{o.oidcIssuer}
	}
	return m
}

// errNoAuth is the refusal to serve other machines without asking who
// they are.
var errNoAuth = errors.New("asks no one who they are")

// wellKnown is where the Protected Resource Metadata is served.
const wellKnown = "/.well-known/oauth-protected-resource"

// authenticate asks every request but /healthz and the resource metadata
// for a bearer token the server accepts (auth.RequireBearerToken): a 401
// names the metadata's URL, which says which issuer's tokens to bring.
func authenticate(next http.Handler, o *serveOptions) http.Handler {
	opts := &auth.RequireBearerTokenOptions{AllowMissingExpiration: true}
	meta := resourceMetadata(&o.auth)
	if u, err := url.Parse(o.auth.oidcAudience); err == nil && u.Scheme != "" && u.Host != "" {
		opts.ResourceMetadataURL = u.Scheme + "://" + u.Host + wellKnown + strings.TrimSuffix(u.Path, "/")
	}
	required := auth.RequireBearerToken(o.ident.verify, opts)(next)
	metadata := auth.ProtectedResourceMetadataHandler(meta)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/healthz":
			next.ServeHTTP(w, r)
		case r.URL.Path == wellKnown || strings.HasPrefix(r.URL.Path, wellKnown+"/"):
			metadata.ServeHTTP(w, r)
		default:
			required.ServeHTTP(w, r)
		}
	})
}

// openAudit opens the audit log: a file appended to, - for stderr, off for
// none.
func openAudit(s *cli.Streams, name string, queries bool) (*auditLog, error) {
	switch name {
	case "off":
		return nil, nil
	case "", "-":
		return &auditLog{w: s.Err, queries: queries}, nil
	}
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, cli.Usagef("--audit: %v", err)
	}
	return &auditLog{w: f, queries: queries}, nil
}
