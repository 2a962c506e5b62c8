package kbqserve

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kbqdev/kbq/internal/access"
	"github.com/kbqdev/kbq/internal/cli"
	"github.com/kbqdev/kbq/internal/door/reader"
	"github.com/kbqdev/kbq/internal/postgres/pgstore"
	"github.com/kbqdev/kbq/internal/postgres/pgtest"
	"github.com/kbqdev/kbq/internal/testkb"
	"github.com/kbqdev/kbq/query"
)

// The repositories of the leak test. The private one's words marked
// below are in no other, so that any of them reaching a caller without
// access is a leak.
var leakRepos = map[string]testkb.Files{
	"github.com/acme/vault": {
		".kb/launch.md":             "# Launch\n\nThe zanzibar launch window opens on the ninth; quokka telemetry confirms the rocket.\n\n## Rollback\n\nRoll back the rocket with the xylophone procedure.\n",
		".kb/memories/001-codes.md": "---\nid: 1\ncreated: 2024-05-01T10:00:00Z\n---\nThe marmalade codes rotate with the deploy.\n",
		".kb/context.md":            "The vault holds the zanzibar secrets.\n",
	},
	"github.com/acme/handbook": {
		".kb/deploy.md":  "# Deploy\n\nEveryone deploys the rocket with make deploy, then checks the launch dashboard.\n",
		".kb/oncall.md":  "# On call\n\nThe on-call engineer rolls back a bad deploy and pages the team.\n",
		".kb/context.md": "Be kind in code review.\n",
	},
	"github.com/acme/site": {
		".kb/site.md": "# Site\n\nThe public site tells the story of the rocket launch and the team.\n",
	},
}

const (
	vault     = "github.com/acme/vault"
	vaultWord = "zanzibar"
)

// vaultOnly are words only the private repository holds.
var vaultOnly = []string{"zanzibar", "quokka", "xylophone", "marmalade", "vault"}

// leakQueries are n queries generated from the repositories' words, with
// filters, phrases, prefixes and repo: filters among them.
func leakQueries(n int) []string {
	var words []string
	seen := map[string]bool{}
	for _, fs := range leakRepos {
		for _, text := range fs {
			for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return (r < 'a' || r > 'z') && r != '-' }) {
				if len(w) > 2 && !seen[w] {
					seen[w] = true
					words = append(words, w)
				}
			}
		}
	}
	slices.Sort(words)
	rng := rand.New(rand.NewPCG(47, 1))
	pick := func() string { return words[rng.IntN(len(words))] }
	var out []string
	for len(out) < n {
		var q string
		switch rng.IntN(8) {
		case 0:
			q = `"` + pick() + " " + pick() + `"`
		case 1:
			q = pick()[:3] + "*"
		case 2:
			q = pick() + " repo:" + vault
		case 3:
			q = pick() + " kind:memory"
		case 4:
			q = pick() + " -" + pick()
		default:
			k := 1 + rng.IntN(3)
			var ws []string
			for range k {
				ws = append(ws, pick())
			}
			q = strings.Join(ws, " ")
		}
		out = append(out, q)
	}
	return out
}

// A caller without access to a private repository learns nothing of it
// through HTTP, MCP, kbq's own reading of the database as a role, or SQL
// as a role: no result, name, count or note, over 1,000 generated
// queries; and a caller's results are those of a local union of exactly
// the repositories it may read, scores included.
func TestNothingLeaks(t *testing.T) {
	ctx := context.Background()
	dburl := pgtest.DB(t)
	owner := pgtest.Connect(t, dburl)
	dirs := map[string]string{}
	for name, fs := range leakRepos {
		dirs[name] = testkb.Build(t, fs)
		src, closeSource, err := pgstore.OpenSource(dirs[name], name)
		if err != nil {
			t.Fatal(err)
		}
		src.Commit = "a"
		vis := map[string]string{vault: "private", "github.com/acme/handbook": "internal", "github.com/acme/site": "public"}[name]
		if _, err := pgstore.Publish(ctx, owner, src, pgstore.Options{Visibility: vis}); err != nil {
			t.Fatal(err)
		}
		closeSource()
	}
	server, launchRole, plainRole := pgtest.Role(dburl, "server"), pgtest.Role(dburl, "launch"), pgtest.Role(dburl, "plain")
	pgtest.Exec(t, dburl, pgstore.ServerGrants(server)...)
	pgtest.Exec(t, dburl, pgstore.ReadOnlyGrants(launchRole)...)
	pgtest.Exec(t, dburl, pgstore.ReadOnlyGrants(plainRole)...)
	for _, g := range []pgstore.Grant{{Principal: "group:launch", Pattern: "github.com/acme/vault"}, {Principal: "role:" + launchRole, Pattern: "github.com/acme/v*"}} {
		if _, err := pgstore.AddGrant(ctx, owner, g); err != nil {
			t.Fatal(err)
		}
	}
	asRole := func(role string) string { return strings.Replace(dburl, "kbq@", role+"@", 1) }

	// kbq serve --db as the server's role, with two callers by token.
	sum := func(s string) string { h := sha256.Sum256([]byte(s)); return hex.EncodeToString(h[:]) }
	tokens := filepath.Join(t.TempDir(), "tokens")
	os.WriteFile(tokens, []byte("sha256:"+sum("tok-ada")+" user:ada group:launch\nsha256:"+sum("tok-bob")+" user:bob group:docs\n"), 0o600)
	env := map[string]string{"XDG_CACHE_HOME": t.TempDir(), "KBQ_USAGE": "off"}
	streams := &cli.Streams{Getenv: func(k string) string { return env[k] }, Err: &strings.Builder{}}
	tl := serverToolsOf(streams, &reader.Sources{DB: asRole(server)})
	if tl.unavailable != nil {
		t.Fatal(tl.unavailable)
	}
	t.Cleanup(tl.close)
	o := &serveOptions{auth: authOptions{tokensFile: tokens}}
	var err error
	if o.ident, err = newIdentifier(&o.auth); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(newHandler(tl, o, true))
	t.Cleanup(srv.Close)

	// The local unions each caller's results must equal.
	local := func(names ...string) *reader.Artifacts {
		var parts []query.Part
		for _, n := range names {
			ix, err := query.Open(dirs[n])
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { ix.Close() })
			parts = append(parts, query.Part{Name: n, Index: ix})
		}
		slices.SortFunc(parts, func(a, b query.Part) int { return strings.Compare(a.Name, b.Name) })
		a, err := reader.NewArtifacts(parts)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	everything := local(vault, "github.com/acme/handbook", "github.com/acme/site")
	permitted := local("github.com/acme/handbook", "github.com/acme/site")

	httpGet := func(token, path string) (int, string) {
		req, _ := http.NewRequest("GET", srv.URL+path, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		data, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, string(data)
	}
	// leaks fails when text, an answer to bob, holds a word only the
	// vault has, or its name; asked holds what bob sent, which answers may
	// echo (the query), and whose words are left to the comparison of
	// results with the local union's.
	leaks := func(where, text, asked string) {
		t.Helper()
		low := strings.ToLower(text)
		for _, w := range append(vaultOnly, "acme/vault") {
			if strings.Contains(strings.ToLower(asked), w) {
				continue
			}
			if strings.Contains(low, w) {
				t.Fatalf("%s: %q reaches bob: %s", where, w, text)
			}
		}
	}
	type hit struct {
		Repo, Path string
		Score      float64
	}
	hitsOf := func(resp *query.Response) []hit {
		var out []hit
		for _, r := range resp.Results {
			out = append(out, hit{r.Repo, r.Path, r.Score})
		}
		return out
	}
	// The same scores, to the last digits JSON keeps.
	same := func(a, b []hit) bool {
		return slices.EqualFunc(a, b, func(x, y hit) bool {
			return x.Repo == y.Repo && x.Path == y.Path && fmt.Sprintf("%.9g", x.Score) == fmt.Sprintf("%.9g", y.Score)
		})
	}

	// MCP over HTTP, as bob.
	mcpClient := mcp.NewClient(&mcp.Implementation{Name: "leak-test"}, nil)
	cs, err := mcpClient.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp",
		HTTPClient: &http.Client{Transport: bearerTransport("tok-bob")}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })

	// kbq's own reading of the database, as a role without the grant.
	plainEnv := map[string]string{"XDG_CACHE_HOME": t.TempDir()}
	asPlain, err := reader.Open(func(k string) string { return plainEnv[k] }, &reader.Sources{DB: asRole(plainRole)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { asPlain.Close() })
	plainConn := pgtest.Connect(t, asRole(plainRole))

	queries := leakQueries(1000)
	compared := 0
	for _, q := range queries {
		want, wantErr := permitted.Search(ctx, query.Request{Query: q, N: 10})
		// HTTP
		code, body := httpGet("tok-bob", "/search?n=10&q="+url.QueryEscape(q))
		leaks("HTTP /search?q="+q, body, q)
		if wantErr == nil {
			var got query.Response
			if code != 200 || json.Unmarshal([]byte(body), &got) != nil || !same(hitsOf(&got), hitsOf(want)) || got.Total != want.Total {
				t.Fatalf("HTTP %q as bob: %d %s\nwant %+v (total %d)", q, code, body, hitsOf(want), want.Total)
			}
			compared++
		} else if code != 400 {
			t.Fatalf("HTTP %q as bob: %d %s, want the local union's error %v", q, code, body, wantErr)
		}
		// MCP
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "knowledge_search", Arguments: map[string]any{"query": q, "n": 10}})
		if err != nil {
			t.Fatal(err)
		}
		data, _ := json.Marshal(res)
		leaks("MCP "+q, string(data), q)
		if wantErr == nil {
			var got query.Response
			if sc, _ := json.Marshal(res.StructuredContent); json.Unmarshal(sc, &got) != nil || !same(hitsOf(&got), hitsOf(want)) {
				t.Fatalf("MCP %q as bob: %s\nwant %+v", q, data, hitsOf(want))
			}
		}
		// kbq --db as a role
		resp, err := asPlain.Search(ctx, query.Request{Query: q, N: 10})
		if err == nil {
			data, _ := json.Marshal(resp)
			leaks("kbq --db as a role: "+q, string(data), q)
			if wantErr == nil && !same(hitsOf(resp), hitsOf(want)) {
				t.Fatalf("kbq --db %q as a role: %+v, want %+v", q, hitsOf(resp), hitsOf(want))
			}
		} else {
			leaks("kbq --db as a role: "+q, err.Error(), q)
		}
		// SQL as a role: what its plain SQL finds is what the permitted
		// repositories hold.
		var got, wantSQL int
		plain := strings.NewReplacer("*", "", `"`, "", "-", " ", "repo:"+vault, "", "kind:memory", "").Replace(q)
		if err := plainConn.QueryRow(ctx, `SELECT count(*) FROM kbq_chunk_search WHERE tsv @@ plainto_tsquery('english', $1)`, plain).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if err := owner.QueryRow(ctx, `SELECT count(*) FROM kbq_chunk_search c JOIN kbq_repo r ON r.id = c.repo_id
			WHERE r.visibility <> 'private' AND tsv @@ plainto_tsquery('english', $1)`, plain).Scan(&wantSQL); err != nil {
			t.Fatal(err)
		}
		if got != wantSQL {
			t.Fatalf("SQL %q as a role: %d chunks, want %d", plain, got, wantSQL)
		}
	}
	if compared < 500 {
		t.Errorf("only %d of the queries had results to compare", compared)
	}

	// What names a repository: asked of one bob may not read, the answer
	// is the answer for one that does not exist.
	for _, c := range []struct{ forbidden, absent string }{
		{"/get?ref=github.com/acme/vault:launch", "/get?ref=github.com/acme/nothere:launch"},
		{"/get?ref=github.com/acme/vault:memory:1", "/get?ref=github.com/acme/nothere:memory:1"},
		{"/context?repo=github.com/acme/vault", "/context?repo=github.com/acme/nothere"},
		{"/search?q=rocket+repo:github.com/acme/vault", "/search?q=rocket+repo:github.com/acme/nothere"},
	} {
		c1, b1 := httpGet("tok-bob", c.forbidden)
		c2, b2 := httpGet("tok-bob", c.absent)
		if c1 != c2 || strings.ReplaceAll(b1, "vault", "nothere") != b2 {
			t.Errorf("%s tells what %s does not:\n%d %s\n%d %s", c.forbidden, c.absent, c1, b1, c2, b2)
		}
	}
	for _, path := range []string{"/list", "/stats", "/healthz", "/get?ref=launch", "/context?repo=github.com/acme/handbook"} {
		_, body := httpGet("tok-bob", path)
		leaks(path, body, path)
	}
	for _, tool := range []string{"knowledge_list", "knowledge_context"} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{}})
		if err != nil {
			t.Fatal(err)
		}
		data, _ := json.Marshal(res)
		leaks("MCP "+tool, string(data), "")
	}
	_, stats := httpGet("tok-bob", "/stats")
	if !strings.Contains(stats, `"documents":4`) {
		t.Errorf("bob's /stats counts other than his 4 documents: %s", stats)
	}

	// Ada, of group launch, reads all three, ranked as a local union of
	// the three.
	for _, q := range queries[:200] {
		want, wantErr := everything.Search(ctx, query.Request{Query: q, N: 10})
		code, body := httpGet("tok-ada", "/search?n=10&q="+url.QueryEscape(q))
		if wantErr != nil {
			continue
		}
		var got query.Response
		if code != 200 || json.Unmarshal([]byte(body), &got) != nil || !same(hitsOf(&got), hitsOf(want)) {
			t.Fatalf("HTTP %q as ada: %d %s\nwant %+v", q, code, body, hitsOf(want))
		}
	}
	if _, body := httpGet("tok-ada", "/search?q="+vaultWord); !strings.Contains(body, vault) {
		t.Errorf("ada cannot find the vault: %s", body)
	}
	// A role granted it reads it in SQL too.
	var n int
	if err := pgtest.Connect(t, asRole(launchRole)).QueryRow(ctx, `SELECT count(*) FROM kbq_chunk_search WHERE body LIKE '%zanzibar%'`).Scan(&n); err != nil || n == 0 {
		t.Errorf("the launch role reads %d chunks of the vault (%v)", n, err)
	}
	_ = access.Public
}

// bearerTransport adds a bearer token to every request.
type bearerTransport string

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(r)
}
