package kbqserve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kbqdev/kbq/internal/cli"
	"github.com/kbqdev/kbq/internal/door/reader"
	"github.com/kbqdev/kbq/internal/usage"
	"github.com/kbqdev/kbq/query"
	"github.com/kbqdev/kbq/query/documents"
)

// reloadInterval is how often the servers look for a new artifact.
const reloadInterval = 250 * time.Millisecond

// Limits of the HTTP server.
const (
	maxHeaderBytes  = 64 << 10
	maxBodyBytes    = 1 << 20
	shutdownTimeout = 10 * time.Second
)

type serveOptions struct {
	src          reader.Sources
	addr         string
	allowRemote  bool
	allowOrigins []string
	auth         authOptions
	ident        *identifier // who callers are; nil when no one is asked
}

func newServeCommand(s *cli.Streams) *cli.Command {
	o := &serveOptions{}
	return &cli.Command{
		Name:      "serve",
		Usage:     "serve the knowledge over a read-only HTTP JSON API and MCP",
		UsageText: "kbq serve [--addr 127.0.0.1:7419] [--allow-remote] [--allow-origin URL] [--index DIR ... | --repo NAME | --all-repos | --db URL]\n   [--oidc-issuer URL --oidc-audience AUD | --github-api URL | --tokens FILE] [--audit FILE]",
		Description: `Serves the artifact over HTTP:

   GET /search?q=&n=&dir=&kind=&tag=&scope=&max_tokens=&chunks=&all_scopes=&mode=
   GET /get?topic=            (or path= or ref=; memory:ID works too)
   GET /list?kind=&tag=&scope=
   GET /context?dir=&wrap=
   GET /stats
   GET /healthz
   /mcp                       the MCP tools over Streamable HTTP

with the JSON shapes of the CLI's --json (docs/http-api.md). It listens on
loopback only unless --allow-remote, and refuses requests whose Host or
Origin is not local, so that a web page cannot reach it through DNS
rebinding (--allow-origin admits a browser origin). A new artifact built
by kbc is picked up within a second, without a restart and without failing
requests in flight. SIGINT or SIGTERM stop it gracefully.

WHO IS ASKING: with --oidc-issuer and --oidc-audience (OAuth access tokens,
JWTs, of that issuer and naming this server: a user's, or a GitHub Actions
job's), --github-api (GitHub tokens, each reading exactly the published
repositories it can read on GitHub) or --tokens FILE (static tokens, hashed),
every request but /healthz needs "Authorization: Bearer TOKEN"; without
one it is answered 401 with the Protected Resource Metadata of
/.well-known/oauth-protected-resource, as the MCP authorization spec asks.
A caller then reads only what kbc grant and each repository's visibility
let it read: its searches rank those repositories alone, and nothing of
the others (names, counts, notes) reaches it. Each of its requests is
logged as a JSON line (--audit). A non-loopback --addr needs one of these,
or --insecure-no-auth (docs/security.md).

` + reader.ExitCodesHelp,
		Flags: append(append(o.src.Flags(),
			&cli.StringFlag{Name: "addr", Usage: "listen on `ADDR`", Value: "127.0.0.1:7419", Destination: &o.addr},
			&cli.BoolFlag{Name: "allow-remote", Usage: "allow listening on an address other machines can reach", Destination: &o.allowRemote},
			&cli.StringSliceFlag{Name: "allow-origin", Usage: "admit browser requests from `URL` (repeatable)"},
		), o.auth.flags()...),
		Action: func(c *cli.Context) error {
			if c.Args().Present() {
				return cli.Usagef("kbq serve takes no arguments")
			}
			o.allowOrigins = c.StringSlice("allow-origin")
			return runServe(c.Context, s, o)
		},
	}
}

func runServe(ctx context.Context, s *cli.Streams, o *serveOptions) error {
	host, _, err := net.SplitHostPort(o.addr)
	if err != nil {
		return cli.Usagef("--addr %q: %v", o.addr, err)
	}
	if !isLoopbackHost(host) && !o.allowRemote {
		return cli.Usagef("--addr %s is reachable from other machines; kbq serve listens on loopback unless --allow-remote", o.addr)
	}
	if !isLoopbackHost(host) && !o.auth.enabled() && !o.auth.insecureNoAuth {
		return cli.Usagef("--addr %s is reachable from other machines, and kbq serve %v: identify callers with --oidc-issuer and --oidc-audience, --github-api or --tokens, or say --insecure-no-auth to serve anyone who connects", o.addr, errNoAuth)
	}
	if o.auth.enabled() {
		if o.ident, err = newIdentifier(&o.auth); err != nil {
			return err
		}
	}
	paceServerGC(s)
	t := serverToolsOf(s, &o.src)
	if t.unavailable != nil {
		// Nothing to serve now or later (no repository, no --index):
		// say so rather than answer 503 forever.
		return t.unavailable
	}
	defer t.close()
	t.usage.Background() // answers do not wait on the usage log
	if o.ident != nil {
		t.authenticated = true
		if t.audit, err = openAudit(s, o.auth.audit, o.auth.auditQueries); err != nil {
			return err
		}
		if t.refetch != nil && t.policy.Grants == nil {
			fmt.Fprintln(s.Err, "kbq serve: note: the database role may not read the grants (kbq_grant): private repositories are served to no caller; GRANT SELECT ON kbq_grant to it (docs/security.md)")
		}
	}
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", o.addr, err)
	}
	if !isLoopbackHost(host) && o.ident == nil {
		fmt.Fprintf(s.Err, "kbq serve: warning: listening on %s, reachable from other machines; anyone who can connect can read this knowledge\n", ln.Addr())
	}
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	t.watch(ctx, s, "kbq serve")

	srv := &http.Server{
		Handler:           newHandler(t, o, !isLoopbackHost(host)),
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    maxHeaderBytes,
	}
	if _, release, err := t.backend(nil); err != nil {
		fmt.Fprintf(s.Err, "kbq serve: %v\n", err)
	} else {
		release()
	}
	fmt.Fprintf(s.Err, "kbq serve: serving %s on http://%s\n", t.servedDir(), ln.Addr())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	fmt.Fprintln(s.Err, "kbq serve: shutting down")
	shutdown, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil {
		return fmt.Errorf("shut down: %w", err)
	}
	return nil
}

// sessionTimeout closes an MCP session idle this long.
const sessionTimeout = 30 * time.Minute

// newHandler routes the HTTP API and /mcp behind the request guards.
func newHandler(t *served, o *serveOptions, remote bool) http.Handler {
	mux := http.NewServeMux()
	api := &httpAPI{t: t}
	mux.HandleFunc("GET /search", api.search)
	mux.HandleFunc("GET /get", api.get)
	mux.HandleFunc("GET /list", api.list)
	mux.HandleFunc("GET /context", api.context)
	mux.HandleFunc("GET /stats", api.stats)
	mux.HandleFunc("GET /healthz", api.healthz)
	for _, path := range []string{"/search", "/get", "/list", "/context", "/stats", "/healthz"} {
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Allow", "GET, HEAD")
			writeError(w, http.StatusMethodNotAllowed, fmt.Sprintf("method %s not allowed: %s answers GET", r.Method, path))
		})
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, fmt.Sprintf("not found: no endpoint %s (the API has /search, /get, /list, /context, /stats, /healthz and /mcp)", r.URL.Path))
	})
	// The MCP server, its tools' schemas derived by reflection, takes
	// two milliseconds to build: it is built beside the first requests,
	// and a session waits for it.
	var server *mcp.Server
	built := make(chan struct{})
	go func() {
		defer close(built)
		server = newMCPServer(t)
	}()
	mux.Handle("/mcp", newSessions(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { <-built; return server },
		// guard is the one check of Host for /mcp and the API alike.
		&mcp.StreamableHTTPOptions{MaxRequestBodyBytes: maxBodyBytes, SessionTimeout: sessionTimeout, DisableLocalhostProtection: true}),
		maxSessions, sessionTimeout))
	var h http.Handler = mux
	if o.ident != nil {
		t.authenticated = true
		h = authenticate(mux, o)
	}
	return guard(h, o.allowOrigins, remote)
}

// guard refuses requests that a web page could have made through DNS
// rebinding or cross-origin: on loopback, the Host must be a loopback name;
// a browser Origin must be loopback or explicitly allowed, and a request a
// browser marks cross-site (Sec-Fetch-Site, which an <img> on any page
// sends without an Origin) is refused unless its Origin is allowed. It
// also bounds request bodies, and answers 500 for a request that panics,
// serving the rest.
func guard(next http.Handler, allowOrigins []string, remote bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				writeError(w, http.StatusInternalServerError, fmt.Sprintf("internal error: %v", p))
			}
		}()
		if r.Header.Get("Sec-Fetch-Site") == "cross-site" && !slices.Contains(allowOrigins, r.Header.Get("Origin")) {
			writeError(w, http.StatusForbidden, "forbidden: a cross-site request from a web page (kbq serve --allow-origin admits an origin)")
			return
		}
		if !remote {
			host := r.Host
			if h, _, err := net.SplitHostPort(host); err == nil {
				host = h
			}
			if !isLoopbackHost(host) {
				writeError(w, http.StatusForbidden, fmt.Sprintf("forbidden: Host %q is not this machine", r.Host))
				return
			}
		}
		if origin := r.Header.Get("Origin"); origin != "" && !slices.Contains(allowOrigins, origin) {
			u, err := url.Parse(origin)
			if err != nil || !isLoopbackHost(u.Hostname()) {
				writeError(w, http.StatusForbidden, fmt.Sprintf("forbidden: Origin %q is not allowed (kbq serve --allow-origin admits it)", origin))
				return
			}
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxBodyBytes)
		next.ServeHTTP(w, r)
	})
}

func isLoopbackHost(host string) bool {
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// httpAPI answers the JSON endpoints.
type httpAPI struct{ t *served }

type apiError struct {
	Error string `json:"error"`
}

func writeJSONStatus(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSONStatus(w, status, apiError{Error: msg})
}

// fail maps errors to statuses: bad arguments 400, unknown documents 404,
// an unusable artifact 503.
func fail(w http.ResponseWriter, err error) {
	switch {
	case errors.Is(err, errArgs), errors.Is(err, query.ErrUnknownScope), errors.Is(err, query.ErrNothingToFind), errors.Is(err, query.ErrBadFilter):
		writeError(w, http.StatusBadRequest, err.Error())
	case errors.Is(err, documents.ErrNotFound):
		writeError(w, http.StatusNotFound, err.Error())
	case errors.Is(err, errBusy):
		w.Header().Set("Retry-After", "1")
		writeError(w, http.StatusServiceUnavailable, err.Error())
	default:
		writeError(w, http.StatusServiceUnavailable, err.Error())
	}
}

func intParam(q url.Values, name string) (int, error) {
	v := q.Get(name)
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, fmt.Errorf("%w: %s=%q is not a number", errArgs, name, v)
	}
	return n, nil
}

func boolParam(q url.Values, name string) (bool, error) {
	s := q.Get(name)
	if s == "" {
		return false, nil
	}
	v, err := strconv.ParseBool(s)
	if err != nil {
		return false, fmt.Errorf("%w: %s=%q is not true or false", errArgs, name, s)
	}
	return v, nil
}

func (a *httpAPI) search(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	in := searchArgs{Query: q.Get("q"), Kind: q.Get("kind"), Tag: q.Get("tag"), Dir: q.Get("dir"), Scope: q.Get("scope"), Mode: q.Get("mode"), Recency: q.Get("recency")}
	var err error
	if in.Chunks, err = boolParam(q, "chunks"); err != nil {
		fail(w, err)
		return
	}
	if in.AllScopes, err = boolParam(q, "all_scopes"); err != nil {
		fail(w, err)
		return
	}
	if in.IncludeSuperseded, err = boolParam(q, "include_superseded"); err != nil {
		fail(w, err)
		return
	}
	if in.N, err = intParam(q, "n"); err != nil {
		fail(w, err)
		return
	}
	if in.MaxTokens, err = intParam(q, "max_tokens"); err != nil {
		fail(w, err)
		return
	}
	if v := q.Get("min_score"); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			fail(w, fmt.Errorf("%w: min_score=%q is not a number", errArgs, v))
			return
		}
		in.MinScore = &f
	}
	if q.Has("n") && in.N < 1 {
		fail(w, fmt.Errorf("%w: n must be between 1 and %d", errArgs, maxResults))
		return
	}
	if in.N == 0 {
		in.N = query.DefaultN
	}
	who, err := a.t.who(r.Context(), nil)
	if err != nil {
		fail(w, err)
		return
	}
	resp, err := a.t.find(r.Context(), who, in, usage.ViaHTTP)
	if err != nil {
		fail(w, err)
		return
	}
	writeJSONStatus(w, http.StatusOK, resp)
}

func (a *httpAPI) get(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	ref := q.Get("topic")
	for _, name := range []string{"path", "ref"} {
		if ref == "" {
			ref = q.Get(name)
		}
	}
	who, err := a.t.who(r.Context(), nil)
	if err != nil {
		fail(w, err)
		return
	}
	doc, err := a.t.document(r.Context(), who, getArgs{Ref: ref, Dir: q.Get("dir")}, usage.ViaHTTP)
	if err != nil {
		fail(w, err)
		return
	}
	writeJSONStatus(w, http.StatusOK, doc)
}

func (a *httpAPI) list(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	_, out, err := a.t.list(r.Context(), nil, listArgs{Kind: q.Get("kind"), Tag: q.Get("tag"), Scope: q.Get("scope")})
	if err != nil {
		fail(w, err)
		return
	}
	writeJSONStatus(w, http.StatusOK, out.Documents)
}

func (a *httpAPI) context(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	dir, err := a.t.dirArg(q.Get("dir"))
	if err != nil {
		fail(w, err)
		return
	}
	hot := reader.HotDefault
	if q.Has("hot") {
		if hot, err = intParam(q, "hot"); err != nil {
			fail(w, err)
			return
		}
	}
	wrap, err := boolParam(q, "wrap")
	if err != nil {
		fail(w, err)
		return
	}
	who, err := a.t.who(r.Context(), nil)
	if err != nil {
		fail(w, err)
		return
	}
	out, err := a.t.assemble(r.Context(), who, usage.ViaHTTP, q.Get("repo"), dir, wrap, hot)
	if err != nil {
		fail(w, err)
		return
	}
	writeJSONStatus(w, http.StatusOK, out)
}

func (a *httpAPI) stats(w http.ResponseWriter, r *http.Request) {
	who, err := a.t.who(r.Context(), nil)
	if err != nil {
		fail(w, err)
		return
	}
	ix, release, err := a.t.acquire(who)
	if err != nil {
		fail(w, err)
		return
	}
	defer release()
	st, err := ix.Stats(time.Now())
	if err != nil {
		fail(w, err)
		return
	}
	writeJSONStatus(w, http.StatusOK, st)
}

func (a *httpAPI) healthz(w http.ResponseWriter, r *http.Request) {
	if a.t.authenticated {
		// Asked by anyone: whether it serves, and nothing of what.
		_, release, err := a.t.acquire(nil)
		if err != nil {
			writeJSONStatus(w, http.StatusServiceUnavailable, map[string]string{"status": "unavailable"})
			return
		}
		release()
		writeJSONStatus(w, http.StatusOK, map[string]string{"status": "ok"})
		return
	}
	ix, release, err := a.t.acquire(nil)
	if err != nil {
		writeJSONStatus(w, http.StatusServiceUnavailable, map[string]string{"status": "unavailable", "error": err.Error()})
		return
	}
	defer release()
	if parts := ix.Parts(); len(parts) > 1 || parts[0].Name != "" {
		// Several repositories: each one's, and the documents of all.
		type repoHealth struct {
			Name      string    `json:"name"`
			Documents int       `json:"documents"`
			Commit    string    `json:"commit,omitempty"`
			BuiltAt   time.Time `json:"built_at"`
		}
		var repos []repoHealth
		total := 0
		for _, p := range parts {
			m := p.Index.Header()
			repos = append(repos, repoHealth{p.Name, m.Counts.Documents, m.Source.Commit, m.BuiltAt})
			total += m.Counts.Documents
		}
		writeJSONStatus(w, http.StatusOK, map[string]any{"status": "ok", "documents": total, "repos": repos})
		return
	}
	m := ix.Parts()[0].Index.Header()
	writeJSONStatus(w, http.StatusOK, map[string]any{
		"status": "ok", "documents": m.Counts.Documents, "commit": m.Source.Commit, "built_at": m.BuiltAt,
	})
}
