package kbqserve

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kbqdev/kbq/artifact"
	"github.com/kbqdev/kbq/internal/access"
	"github.com/kbqdev/kbq/internal/cli"
	"github.com/kbqdev/kbq/internal/door/online"
	"github.com/kbqdev/kbq/internal/door/reader"
	"github.com/kbqdev/kbq/internal/door/render"
	"github.com/kbqdev/kbq/internal/postgres/pgread"
	"github.com/kbqdev/kbq/internal/usage"
	"github.com/kbqdev/kbq/knowledge"
	"github.com/kbqdev/kbq/query"
	"github.com/kbqdev/kbq/query/documents"
)

// Limits of tool arguments, so that one call cannot tie the server up.
const (
	maxQueryBytes = 4096
	maxResults    = 50
)

const mcpInstructions = `This server reads the project's knowledge base: conventions, design
decisions, procedures, memories and notes that the team keeps in .kb/
directories and AGENTS.md files, compiled by kbc. Call knowledge_context at
the start of a task, and knowledge_search before answering questions about
how this project does things or why; cite the paths it returns.`

// served is what a server serves and how: the artifact (live, reloaded
// when kbc builds anew), several served as one, or the repositories of a
// database (refetched every dbRefresh), and where use is recorded. The
// HTTP API and the MCP tools answer from it alike. dir is the repository
// directory queries are made from unless they say otherwise.
type served struct {
	usage *reader.Usage // where the documents handed out are recorded
	// authenticated is set when every caller is identified (kbq serve
	// with --oidc-issuer, --github-api or --tokens): each reads what it
	// may, and its requests go to audit.
	authenticated bool
	audit         *auditLog
	live          *query.Live
	// many, when several artifacts are served as one, are theirs;
	// refetch, when they come from a database, fetches them anew.
	mu      sync.RWMutex
	many    []namedLive
	refetch func() (*reader.Found, error)
	// remote reads what the fetch of many left in the database, nil
	// when it left nothing (reader.Found.Remote).
	remote *pgread.Remote
	// answered, for a database's repositories, is closed once a request
	// has been answered.
	answered   chan struct{}
	answerOnce sync.Once
	// policy says who may read which of many.
	policy access.Policy
	// fetchErr is why nothing could be fetched from the database yet.
	fetchErr error
	// current is what was last served to each set of readable
	// repositories (by their names), reused while its indexes are the
	// same.
	current map[string]*reader.Artifacts
	// following is closed when follow has returned.
	following chan struct{}
	dir       string
	root      string // the repository's working tree, absolute; "" when unknown
	// embedder embeds queries for the semantic channel.
	embedder reader.Embedder
	// unavailable, when set, is why no artifact can be served at all (no
	// repository and no --index); every tool call returns it.
	unavailable error
}

type searchArgs struct {
	Query     string `json:"query" jsonschema:"what to look for: a question as the user asked it, or keywords. Supports \"exact phrases\" (ranked first; +\"phrase\" requires one), -excluded words, prefix*, and filters tag:x kind:memory scope:services/api"`
	N         int    `json:"n,omitempty" jsonschema:"number of results, 1 to 50 (default 5)"`
	MaxTokens int    `json:"max_tokens,omitempty" jsonschema:"fit the results' content into about this many tokens (default 8000)"`
	Kind      string `json:"kind,omitempty" jsonschema:"only documents of this kind"`
	Tag       string `json:"tag,omitempty" jsonschema:"only documents with this tag"`
	Dir       string `json:"dir,omitempty" jsonschema:"the directory the question is about, relative to the repository root or absolute: the knowledge scopes that contain it are in force and deeper ones win (default: where the server runs)"`
	Scope     string `json:"scope,omitempty" jsonschema:"only documents of this scope and below, from wherever the question is asked: global, project or a directory such as services/api"`
	AllScopes bool   `json:"all_scopes,omitempty" jsonschema:"search every scope, not only those in force for dir, without shadowing"`
	// IncludeSuperseded keeps superseded and deprecated documents.
	IncludeSuperseded bool   `json:"include_superseded,omitempty" jsonschema:"keep documents another supersedes, or that are deprecated (left out by default)"`
	Chunks            bool   `json:"chunks,omitempty" jsonschema:"return every matching chunk, not only each document's best"`
	Mode              string `json:"mode,omitempty" jsonschema:"rank by hybrid (words and meaning: the default when the knowledge base has vectors), lexical (words) or semantic (meaning)"`
	Recency           string `json:"recency,omitempty" jsonschema:"rank recently changed documents higher, with this half-life: 90d, 12w, 6m or 1y (off by default)"`
	// MinScore scales the relevance floors; nil is the default.
	MinScore *float64 `json:"min_score,omitempty" jsonschema:"scale the relevance floors: results matching too weakly are left out, and a question nothing answers gets none (1 by default; 0 keeps every result)"`
}

type getArgs struct {
	Ref string `json:"ref" jsonschema:"the document: a path from a search result, a topic key such as deploy/steps, or memory:ID"`
	Dir string `json:"dir,omitempty" jsonschema:"resolve topic keys from this directory, relative to the repository root or absolute (default: where the server runs)"`
}

type listArgs struct {
	Kind  string `json:"kind,omitempty" jsonschema:"only documents of this kind"`
	Tag   string `json:"tag,omitempty" jsonschema:"only documents with this tag"`
	Scope string `json:"scope,omitempty" jsonschema:"only documents of this scope and below: global, project or a directory"`
}

type contextArgs struct {
	Repo string `json:"repo,omitempty" jsonschema:"the repository whose context to assemble, when several are served"`
	Dir  string `json:"dir,omitempty" jsonschema:"the directory to assemble context for, relative to the repository root or absolute (default: where the server runs)"`
	Hot  *int   `json:"hot,omitempty" jsonschema:"how many documents the closing knowledge index lists, most used first (default 5, 0 for none)"`
}

// listOutput wraps a listing: structured tool output must be an object.
type listOutput struct {
	Documents []documents.Listed `json:"documents"`
}

// contextOutput is the assembled context and what was wrong with it.
type contextOutput = render.ContextJSON

// newMCPServer returns an MCP server with the read-only knowledge tools.
func newMCPServer(t *served) *mcp.Server {
	return newMCPServerWith(t, "kbq", mcpInstructions)
}

func newMCPServerWith(t *served, name, instructions string) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: name, Title: "kbq knowledge", Version: reader.Version},
		&mcp.ServerOptions{Instructions: instructions})
	readOnly := &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: new(bool)}
	mcp.AddTool(s, &mcp.Tool{
		Name:        "knowledge_search",
		Title:       "Search project knowledge",
		Annotations: readOnly,
		InputSchema: inputSchema[searchArgs](),
		Description: `Search the project's knowledge base: conventions, design decisions,
procedures (deploy, release, debugging), memories of past work and notes. Call
it before answering questions about this project's conventions, decisions or
procedures, before making a change whose rules you do not know, and whenever
the user refers to how "we" do something. Pass the question as asked; results
are ranked sections with their path, heading trail and text, best first.`,
	}, t.search)
	mcp.AddTool(s, &mcp.Tool{
		Name:        "knowledge_get",
		Title:       "Read a knowledge document",
		Annotations: readOnly,
		Description: `Read a whole document of the knowledge base, frontmatter included. Call it
when a search result is relevant and you need the rest of that document, or
when the user names a topic (deploy/steps) or a memory (memory:12). The
result's blob identifies the version read.`,
	}, t.get)
	mcp.AddTool(s, &mcp.Tool{
		Name:        "knowledge_list",
		Title:       "List knowledge documents",
		Annotations: readOnly,
		InputSchema: inputSchema[listArgs](),
		Description: `List the documents of the knowledge base with topic, kind, scope, tags and
source. Call it to see what knowledge exists (for instance every memory, or
everything tagged deploy) before searching or reading.`,
	}, t.list)
	mcp.AddTool(s, &mcp.Tool{
		Name:        "knowledge_context",
		Title:       "Load always-on project context",
		Annotations: readOnly,
		Description: `Return the always-loaded context for a directory: the rules in the global,
project and directory context files (.kb/context.md, AGENTS.md, CLAUDE.md,
GEMINI.md) on the way down to it. Call it once at the start of a task, for
the directory you will work in, and follow what it says.`,
	}, t.context)
	return s
}

// inputSchema is the input schema of a tool's arguments, with what the
// knowledge registry defines written in: the kinds, and the filters of
// its Meta keys.
func inputSchema[T any]() *jsonschema.Schema {
	s, err := jsonschema.For[T](nil)
	if err != nil {
		panic(fmt.Sprintf("input schema of %T: %v", *new(T), err))
	}
	if p := s.Properties["kind"]; p != nil {
		p.Description += ": " + knowledge.KindList("or")
	}
	if p := s.Properties["query"]; p != nil {
		for _, k := range knowledge.MetaKeys() {
			if k.Filter {
				p.Description += ", " + k.Name + ":VALUE (" + k.Doc + ")"
			}
		}
	}
	return s
}

// errArgs marks bad tool arguments; they come back as tool errors.
var errArgs = errors.New("invalid arguments")

// dirArg turns a dir argument, relative to the repository root or absolute
// (agents know their working directory as an absolute path), into the
// slash-separated repository path that queries take.
func (t *served) dirArg(d string) (string, error) {
	if d == "" {
		return t.dir, nil
	}
	return t.pathArg("dir", d)
}

// pathArg turns the path argument called name, relative to the repository
// root or absolute, into a slash-separated repository path, refusing one
// that leaves the repository.
func (t *served) pathArg(name, d string) (string, error) {
	if filepath.IsAbs(d) {
		if t.root == "" {
			return "", fmt.Errorf("%w: %s %q is absolute, but the artifact was opened outside a repository; pass it relative to the repository root", errArgs, name, d)
		}
		rel, ok := reader.InRepo(t.root, filepath.Clean(d))
		if !ok {
			return "", fmt.Errorf("%w: %s %q is outside the repository at %s", errArgs, name, d, t.root)
		}
		d = rel
	}
	d = strings.Trim(strings.ReplaceAll(d, "\\", "/"), "/")
	if d == "." {
		return "", nil
	}
	for _, part := range strings.Split(d, "/") {
		if part == ".." {
			return "", fmt.Errorf("%w: %s %q leaves the repository", errArgs, name, d)
		}
	}
	return d, nil
}

// searchRequest validates search arguments and turns them into a request.
func (t *served) searchRequest(in searchArgs) (query.Request, error) {
	q := strings.TrimSpace(in.Query)
	switch {
	case q == "":
		return query.Request{}, fmt.Errorf("%w: query is empty; pass the question to search for", errArgs)
	case len(q) > maxQueryBytes:
		return query.Request{}, fmt.Errorf("%w: query is %d bytes, over %d", errArgs, len(q), maxQueryBytes)
	case in.N < 0 || in.N > maxResults:
		return query.Request{}, fmt.Errorf("%w: n must be between 1 and %d", errArgs, maxResults)
	case in.MaxTokens < 0:
		return query.Request{}, fmt.Errorf("%w: max_tokens must be positive", errArgs)
	case in.Kind != "" && !slices.Contains(knowledge.IndexedKinds(), in.Kind):
		return query.Request{}, fmt.Errorf("%w: kind must be one of %s", errArgs, strings.Join(knowledge.IndexedKinds(), ", "))
	case in.Mode != "" && !slices.Contains(query.Modes, in.Mode):
		return query.Request{}, fmt.Errorf("%w: mode must be one of %s", errArgs, strings.Join(query.Modes, ", "))
	}
	dir, err := t.dirArg(in.Dir)
	if err != nil {
		return query.Request{}, err
	}
	req := query.Request{Query: q, N: in.N, MaxTokens: in.MaxTokens, Dir: dir, AllScopes: in.AllScopes, Chunks: in.Chunks, Mode: in.Mode, IncludeSuperseded: in.IncludeSuperseded}
	if in.MinScore != nil {
		if *in.MinScore < 0 {
			return query.Request{}, fmt.Errorf("%w: min_score must be 0 or more", errArgs)
		}
		req.Floor = query.FloorOff
		if *in.MinScore > 0 {
			req.Floor = *in.MinScore
		}
	}
	if in.Recency != "" {
		if req.Recency, err = query.ParseHalfLife(in.Recency); err != nil {
			return query.Request{}, fmt.Errorf("%w: %w", errArgs, err)
		}
	}
	if in.Kind != "" {
		req.Kinds = []string{in.Kind}
	}
	if in.Tag != "" {
		req.Tags = []string{in.Tag}
	}
	if in.Scope != "" {
		req.Scopes = []string{in.Scope}
	}
	return req, nil
}

func (t *served) search(ctx context.Context, call *mcp.CallToolRequest, in searchArgs) (*mcp.CallToolResult, *query.Response, error) {
	who, err := t.who(ctx, call)
	if err != nil {
		return nil, nil, err
	}
	resp, err := t.find(ctx, who, in, usage.ViaMCP)
	if err != nil {
		return nil, nil, err
	}
	var md strings.Builder
	render.SearchMarkdown(&md, resp)
	return textResult(md.String()), resp, nil
}

// find runs the search in asks for, as who, over what who may read, and
// records what it handed out (through via) and, for a caller identified,
// the audit log's line.
func (t *served) find(ctx context.Context, who *access.Principal, in searchArgs, via string) (*query.Response, error) {
	req, err := t.searchRequest(in)
	if err != nil {
		return nil, err
	}
	ix, release, err := t.acquire(who)
	if err != nil {
		return nil, err
	}
	defer release()
	if err := t.embedder.Vectorize(ctx, ix, &req); err != nil {
		return nil, err
	}
	resp, err := runSearch(ctx, ix, req)
	if err != nil {
		return nil, err
	}
	t.usage.RecordSearch(ix, via, in.Query, resp.Results)
	t.audit.record(who, via, "search", ix, len(resp.Results), in.Query)
	return resp, nil
}

func (t *served) get(ctx context.Context, call *mcp.CallToolRequest, in getArgs) (*mcp.CallToolResult, *documents.Document, error) {
	who, err := t.who(ctx, call)
	if err != nil {
		return nil, nil, err
	}
	doc, err := t.document(ctx, who, in, usage.ViaMCP)
	if err != nil {
		return nil, nil, err
	}
	return textResult(doc.Content), doc, nil
}

// document finds the document in asks for, and records that it went out
// through via.
func (t *served) document(ctx context.Context, who *access.Principal, in getArgs, via string) (*documents.Document, error) {
	if strings.TrimSpace(in.Ref) == "" {
		return nil, fmt.Errorf("%w: ref is empty; pass a path, topic or memory:ID", errArgs)
	}
	dir, err := t.dirArg(in.Dir)
	if err != nil {
		return nil, err
	}
	ix, release, err := t.acquire(who)
	if err != nil {
		return nil, err
	}
	defer release()
	doc, err := ix.Get(ctx, reader.GetRequest{Ref: in.Ref, Dir: dir})
	if err != nil {
		return nil, err
	}
	t.usage.RecordGet(ix, via, doc)
	t.audit.record(who, via, "get", ix, 1, in.Ref)
	return doc, nil
}

func (t *served) list(ctx context.Context, call *mcp.CallToolRequest, in listArgs) (*mcp.CallToolResult, *listOutput, error) {
	who, err := t.who(ctx, call)
	if err != nil {
		return nil, nil, err
	}
	if in.Kind != "" && !slices.Contains(knowledge.IndexedKinds(), in.Kind) {
		return nil, nil, fmt.Errorf("%w: kind must be one of %s", errArgs, strings.Join(knowledge.IndexedKinds(), ", "))
	}
	req := documents.ListRequest{}
	if in.Kind != "" {
		req.Kinds = []string{in.Kind}
	}
	if in.Tag != "" {
		req.Tags = []string{in.Tag}
	}
	if in.Scope != "" {
		req.Scopes = []string{in.Scope}
	}
	ix, release, err := t.acquire(who)
	if err != nil {
		return nil, nil, err
	}
	defer release()
	docs, err := ix.List(ctx, req)
	if err != nil {
		return nil, nil, err
	}
	t.audit.record(who, viaOf(call), "list", ix, len(docs), "")
	var md strings.Builder
	fmt.Fprintf(&md, "%d documents\n\n", len(docs))
	render.ListMarkdown(&md, docs)
	return textResult(md.String()), &listOutput{Documents: docs}, nil
}

func (t *served) context(ctx context.Context, call *mcp.CallToolRequest, in contextArgs) (*mcp.CallToolResult, *contextOutput, error) {
	who, err := t.who(ctx, call)
	if err != nil {
		return nil, nil, err
	}
	dir, err := t.dirArg(in.Dir)
	if err != nil {
		return nil, nil, err
	}
	hot := reader.HotDefault
	if in.Hot != nil {
		hot = *in.Hot
	}
	out, err := t.assemble(ctx, who, usage.ViaMCP, in.Repo, dir, false, hot)
	if err != nil {
		return nil, nil, err
	}
	text := out.Text
	if text == "" {
		text = "No context files are in force here."
	}
	return textResult(text), out, nil
}

func (t *served) assemble(ctx context.Context, who *access.Principal, via, repo, dir string, wrap bool, hot int) (*contextOutput, error) {
	if hot < 0 {
		return nil, fmt.Errorf("%w: hot must be 0 or more", errArgs)
	}
	ix, release, err := t.acquire(who)
	if err != nil {
		return nil, err
	}
	defer release()
	res, err := ix.Context(ctx, reader.ContextRequest{Repo: repo, Dir: dir, Usage: t.usage,
		ContextOptions: documents.ContextOptions{Wrap: wrap, IndexSize: hot}})
	if err != nil {
		return nil, err
	}
	t.audit.record(who, via, "context", ix, len(res.Sections), "")
	out := render.NewContextJSON(dir, res)
	return &out, nil
}

func textResult(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}

// serverTools opens the live artifact for the servers, with queries made
// from the current directory by default. The artifact need not exist: the
// servers start anyway, their tools say what to run, and a build that
// appears later is taken into service.
func serverTools(s *cli.Streams, indexDir string) *served {
	return serverToolsOf(s, &reader.Sources{Indexes: optional(indexDir)})
}

func optional(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}

// serverToolsOf opens the live artifacts src names for the servers.
func serverToolsOf(s *cli.Streams, src *reader.Sources) *served {
	if src.Several() {
		found, err := reader.Targets(s.Getenv, src)
		if err != nil && (src.DB == "" || errors.Is(err, cli.ErrUsage)) {
			return &served{unavailable: err}
		}
		t := &served{usage: newUsage(s), embedder: online.QueryEmbedder(s), answered: make(chan struct{})}
		if found != nil {
			for _, n := range found.Notes {
				fmt.Fprintf(s.Err, "kbq: note: %s\n", n)
			}
			t.many, t.policy = livesOf(found.Targets), found.Policy
			t.remote = found.Remote
			t.complete(found.Remote)
		}
		if src.DB != "" {
			// A database down when the server starts is tried again
			// with every refresh; until one succeeds, requests get why.
			t.fetchErr = err
			t.refetch = func() (*reader.Found, error) { return reader.Targets(s.Getenv, src) }
		}
		return t
	}
	indexDir := src.One()
	cwd, _ := os.Getwd()
	dir, root, err := query.Locate(indexDir, s.Getenv("KBQ_INDEX"), cwd)
	if err != nil {
		return &served{unavailable: err}
	}
	rel, err := reader.RepoDir(root, cwd)
	if err != nil {
		rel = ""
	}
	t := &served{usage: newUsage(s), live: query.NewLive(dir, query.DefaultRanking()), dir: rel, root: root, embedder: online.QueryEmbedder(s)}
	// The org scopes its configuration names, from the database of
	// $KBQ_DATABASE_URL, are served with it.
	if m, err := artifact.ReadHeader(dir); err == nil && len(m.Config.Org) > 0 && s.Getenv("KBQ_DATABASE_URL") != "" {
		orgs, err := reader.OrgTargets(s.Getenv, m.Config.Org)
		if err != nil {
			fmt.Fprintf(s.Err, "kbq: note: the org scopes of %s are not in force: %v\n", knowledge.ConfigPath, err)
			return t
		}
		t.many = append([]namedLive{{reader.RepoNameOf(root), t.live, 0}}, livesOf(orgs)...)
		t.live = nil
	}
	return t
}

// namedLive is one of several artifacts served as one.
type namedLive struct {
	name string
	live *query.Live
	org  int // its place among the org scopes, 0 for none
}

// acquire returns what is served now to who (nil: a server that asks no
// one), and its release function: the repositories who may read, ranked
// as one with their own statistics, as if no other were served. The
// first release lets the fetch of what the database's files left for
// later begin (complete).
func (t *served) acquire(who *access.Principal) (reader.Backend, func(), error) {
	b, release, err := t.backend(who)
	if err != nil {
		return nil, nil, err
	}
	return b, func() {
		release()
		t.answerOnce.Do(func() {
			if t.answered != nil {
				close(t.answered)
			}
		})
	}, nil
}

// backend is acquire without counting an answer.
func (t *served) backend(who *access.Principal) (reader.Backend, func(), error) {
	if t.unavailable != nil {
		return nil, nil, t.unavailable
	}
	var releases []func()
	release := func() {
		for _, r := range releases {
			r()
		}
	}
	lives := []namedLive{{"", t.live, 0}}
	var policy access.Policy
	if t.live == nil {
		t.mu.RLock()
		many, fetchErr := t.many, t.fetchErr
		policy = t.policy
		t.mu.RUnlock()
		if len(many) == 0 && fetchErr != nil {
			return nil, nil, fetchErr
		}
		lives = many
	}
	parts := make([]query.Part, 0, len(lives))
	var key strings.Builder
	for _, n := range lives {
		if !policy.MayRead(who, n.name) {
			continue
		}
		ix, r, err := n.live.Acquire()
		if err != nil {
			release()
			if n.name == "" {
				return nil, nil, err
			}
			return nil, nil, fmt.Errorf("%s: %w", n.name, err)
		}
		releases = append(releases, r)
		parts = append(parts, query.Part{Name: n.name, Index: ix, Org: n.org})
		key.WriteString(n.name)
		key.WriteByte(0)
	}
	if len(parts) == 0 {
		return nil, nil, errNothingPermitted
	}
	t.mu.RLock()
	b := t.current[key.String()]
	t.mu.RUnlock()
	if b != nil && b.Of(parts) {
		return b, release, nil
	}
	b, err := reader.NewArtifacts(parts)
	if err != nil {
		release()
		return nil, nil, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.current == nil || len(t.current) >= maxServedSets {
		t.current = map[string]*reader.Artifacts{}
	}
	t.current[key.String()] = b // several's documents are gathered once, not at every request
	return b, release, nil
}

// viaOf names the door of an MCP call, or of an HTTP request (call nil).
func viaOf(call *mcp.CallToolRequest) string {
	if call == nil {
		return usage.ViaHTTP
	}
	return usage.ViaMCP
}

// maxServedSets bounds the sets of readable repositories whose backends
// are kept.
const maxServedSets = 256

// errNothingPermitted means the caller may read no repository served.
var errNothingPermitted = fmt.Errorf("%w: no repository served here is one you may read", documents.ErrNotFound)

// lives are the artifacts served.
func (t *served) lives() []*query.Live {
	if t.live != nil {
		return []*query.Live{t.live}
	}
	t.mu.RLock()
	defer t.mu.RUnlock()
	var out []*query.Live
	for _, n := range t.many {
		out = append(out, n.live)
	}
	return out
}

func livesOf(targets []reader.Target) []namedLive {
	var out []namedLive
	for _, tg := range targets {
		out = append(out, namedLive{tg.Name, query.NewLive(tg.Dir, query.DefaultRanking()), tg.OrgScope})
	}
	return out
}

// dbRefresh is how often the servers look for new publishes in --db.
var dbRefresh = 10 * time.Second

// follow fetches the database's repositories every dbRefresh until ctx
// ends, and serves what changed: a new publish, a repository added.
func (t *served) follow(ctx context.Context, report func(error)) {
	tick := time.NewTicker(dbRefresh)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if err := t.refresh(); err != nil {
			report(err)
		}
	}
}

// refresh fetches the database's repositories once and serves what
// changed.
func (t *served) refresh() error {
	found, err := t.refetch()
	if err != nil {
		t.mu.Lock()
		if len(t.many) == 0 {
			t.fetchErr = err
		}
		t.mu.Unlock()
		return err
	}
	targets := found.Targets
	t.mu.Lock()
	t.fetchErr, t.policy = nil, found.Policy
	t.mu.Unlock()
	t.mu.RLock()
	same := len(targets) == len(t.many)
	for i := 0; same && i < len(targets); i++ {
		same = targets[i].Name == t.many[i].name && targets[i].Dir == t.many[i].live.Dir()
	}
	t.mu.RUnlock()
	if same {
		if found.Remote != nil {
			found.Remote.Close()
		}
		return nil
	}
	fresh := livesOf(targets)
	t.mu.Lock()
	old, oldRemote := t.many, t.remote
	t.many, t.remote = fresh, found.Remote
	t.mu.Unlock()
	t.complete(found.Remote)
	// Requests in flight hold the old indexes a while longer.
	time.AfterFunc(time.Minute, func() {
		for _, n := range old {
			n.live.Close()
		}
		if oldRemote != nil {
			oldRemote.Close()
		}
	})
	return nil
}

// completeAfter is how long a server that answers nothing waits before
// it fetches the rest of the database's files.
var completeAfter = time.Second

// complete fetches, in the background, what r left in the database, into
// the cache, once a request has been answered or after completeAfter:
// the first searches fetch only what they read, and the next refresh
// serves the repositories whole from the cache.
func (t *served) complete(r *pgread.Remote) {
	if r == nil {
		return
	}
	go func() {
		select {
		case <-t.answered:
		case <-time.After(completeAfter):
		}
		// A failure leaves the searches reading the database as they
		// need, and the next refresh tries again.
		r.Complete(context.Background())
	}()
}

// watch keeps the artifacts current until ctx ends, reporting on stderr.
func (t *served) watch(ctx context.Context, s *cli.Streams, name string) {
	report := func(err error) { fmt.Fprintf(s.Err, "%s: %v\n", name, err) }
	if t.refetch != nil {
		t.following = make(chan struct{})
		go func() {
			defer close(t.following)
			t.follow(ctx, report)
		}()
		return
	}
	for _, l := range t.lives() {
		go l.Watch(ctx, reloadInterval, report)
	}
}

// close closes the artifacts served, once watch's context has ended and
// what it started has stopped.
func (t *served) close() {
	t.usage.Close() // the use recorded in the background, written
	if t.following != nil {
		<-t.following
	}
	for _, l := range t.lives() {
		l.Close()
	}
	t.mu.Lock()
	if t.remote != nil {
		t.remote.Close()
	}
	t.mu.Unlock()
}

func newMCPCommand(s *cli.Streams) *cli.Command {
	var src reader.Sources
	return &cli.Command{
		Name:      "mcp",
		Usage:     "serve the knowledge to agents over the Model Context Protocol (stdio)",
		UsageText: "kbq mcp [--index DIR ... | --repo NAME | --all-repos]",
		Description: `Runs a Model Context Protocol server on stdin and stdout with four
read-only tools: knowledge_search, knowledge_get, knowledge_list and
knowledge_context. Queries are made from the directory kbq mcp starts in
unless a tool call names another. A new artifact built by kbc is picked up
within a second, without a restart. With --index more than once, --repo
or --all-repos it serves several repositories as one: searches rank them
together, each result names its repository, and knowledge_get takes
REPO:PATH.

Register it with an agent, for instance:
   claude mcp add kbq -- kbq mcp
   codex mcp add kbq -- kbq mcp
   gemini mcp add kbq kbq mcp
(README.md has the configuration files too.)

` + reader.ExitCodesHelp,
		Flags: src.Flags(),
		Action: func(c *cli.Context) error {
			if c.Args().Present() {
				return cli.Usagef("kbq mcp takes no arguments")
			}
			paceServerGC(s)
			t := serverToolsOf(s, &src)
			if errors.Is(t.unavailable, cli.ErrUsage) {
				return t.unavailable
			}
			srv := &Server{Server: newMCPServerWith(t, "kbq", mcpInstructions), t: t}
			return srv.ServeStdio(c.Context, s, "kbq mcp")
		},
	}
}

// paceServerGC lets a server's heap grow to three times what it holds
// before the collector runs, unless GOGC says otherwise. A server holds
// little (the artifacts are mapped, not read), and a hybrid search
// allocates half a megabyte that the collector, running beside the
// query's embedding on a two-core machine, took from it: kbq serve,
// PowerShell docs with vectors, ten queries × 20, three rounds, hybrid p50
// 3.79 / 3.91 / 3.71 ms at the default pace, 3.35 / 3.40 / 3.41 ms at
// this one, lexical 0.62 ms either way.
func paceServerGC(s *cli.Streams) {
	if s.Getenv("GOGC") == "" {
		debug.SetGCPercent(200)
	}
}

// servedDir names the artifact directory served, for messages.
func (t *served) servedDir() string {
	t.mu.RLock()
	defer t.mu.RUnlock()
	if len(t.many) > 0 {
		var names []string
		for _, n := range t.many {
			names = append(names, n.name+" ("+n.live.Dir()+")")
		}
		return strings.Join(names, ", ")
	}
	if t.live == nil {
		return "no artifact"
	}
	return t.live.Dir()
}
