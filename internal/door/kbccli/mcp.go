package kbccli

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kbqdev/kbq/authoring"
	"github.com/kbqdev/kbq/gitsource"
	"github.com/kbqdev/kbq/internal/cli"
	"github.com/kbqdev/kbq/internal/door/kbqserve"
	"github.com/kbqdev/kbq/knowledge"
)

const writerInstructions = `This server reads and writes the project's knowledge base: conventions,
design decisions, procedures, memories and notes kept in .kb/ directories
and AGENTS.md files. Call knowledge_context at the start of a task and
knowledge_search before answering questions about how this project does
things. When you learn something the team will want next time (a
decision, a convention, a fix that was hard to find), save it with
knowledge_remember, or keep a topic current with knowledge_write. Writes
go to the working tree only: a person reviews them in the pull request.`

const reviewNote = "It is not committed: a person reviews it in the pull request (git diff, or kbc diff on the branch)."

// writer adds the write tools to the knowledge MCP server.
type writer struct {
	srv   *kbqserve.Server
	repo  *gitsource.Repo
	root  string // the working tree, symbolic links resolved
	here  string // the directory the server runs in, resolved
	s     *cli.Streams
	stage bool
	// mu keeps one write and its refresh at a time, so that a search
	// after a write's result sees it.
	mu sync.Mutex
}

type rememberArgs struct {
	Text   string   `json:"text" jsonschema:"the memory: one fact, decision or lesson, in a sentence or a short paragraph"`
	Tags   []string `json:"tags,omitempty" jsonschema:"tags for the memory, such as billing or deploy"`
	Source string   `json:"source,omitempty" jsonschema:"where it came from: user-told (the default) or extracted"`
	// Supersedes retires what the memory corrects.
	Supersedes []string `json:"supersedes,omitempty" jsonschema:"what this memory replaces, so that search no longer serves it: topic keys or memory:ID"`
	// Contradicts are the documents the memory disputes.
	Contradicts []string `json:"contradicts,omitempty" jsonschema:"what this memory disputes, when neither can be called right yet: topic keys or memory:ID; both are then served, marked disputed"`
	Dir         string   `json:"dir,omitempty" jsonschema:"the directory whose own scope keeps it (D/.kb/memories, created if needed), relative to the repository root or absolute (default: the deepest scope containing where the server runs)"`
}

type forgetArgs struct {
	Memory string `json:"memory" jsonschema:"the memory: its id (12, or memory:12) in the scope of dir, or its path such as .kb/memories/012-x.md"`
	Dir    string `json:"dir,omitempty" jsonschema:"the directory whose scope the id belongs to (default: the deepest scope containing where the server runs)"`
}

type writeArgs struct {
	Topic   string   `json:"topic" jsonschema:"the topic key, a path inside .kb/ without .md, such as deploy/steps"`
	Content string   `json:"content" jsonschema:"the whole document in markdown, optionally with YAML frontmatter"`
	Title   string   `json:"title,omitempty" jsonschema:"the title, when the content has no frontmatter"`
	Tags    []string `json:"tags,omitempty" jsonschema:"tags, when the content has no frontmatter"`
	// Supersedes retires what the topic replaces.
	Supersedes []string `json:"supersedes,omitempty" jsonschema:"what this topic replaces, so that search no longer serves it: topic keys or memory:ID (when the content has no frontmatter)"`
	Blob       string   `json:"blob,omitempty" jsonschema:"to replace an existing topic: the blob knowledge_get returned when you read it; a topic changed since is refused"`
	Dir        string   `json:"dir,omitempty" jsonschema:"the directory whose own scope holds the topic (D/.kb/), relative to the repository root or absolute (default: the deepest scope containing where the server runs)"`
}

// writeResult is what a write tool returns.
type writeResult struct {
	Path     string `json:"path"`
	Action   string `json:"action"` // remembered, forgot, created, replaced
	Staged   bool   `json:"staged"`
	Indexed  bool   `json:"indexed"` // the artifact was refreshed, so search sees it
	Review   string `json:"review"`
	Warnings string `json:"warnings,omitempty"`
}

func (w *writer) register() {
	destructive := true
	closed := false
	mcp.AddTool(w.srv.Server, &mcp.Tool{
		Name:  "knowledge_remember",
		Title: "Remember a fact",
		Annotations: &mcp.ToolAnnotations{
			DestructiveHint: &closed, OpenWorldHint: &closed,
		},
		Description: `Save a memory to the project's knowledge base: a fact, decision, convention
or lesson the team will want next time ("the billing API rate-limits at
100 requests a second"). Keep it to one idea. It is written as
.kb/memories/NNN-slug.md in the working tree, validated (secrets are
refused), and found by the next knowledge_search; it is not committed, and
a person reviews it in the pull request.`,
	}, w.remember)
	mcp.AddTool(w.srv.Server, &mcp.Tool{
		Name:  "knowledge_forget",
		Title: "Forget a memory",
		Annotations: &mcp.ToolAnnotations{
			DestructiveHint: &destructive, IdempotentHint: false, OpenWorldHint: &closed,
		},
		Description: `Remove a memory that is wrong or no longer true, by id (in the scope of dir)
or path. Only memories (.kb/memories/) can be removed. The removal shows in
the pull request for a person to review.`,
	}, w.forget)
	mcp.AddTool(w.srv.Server, &mcp.Tool{
		Name:  "knowledge_write",
		Title: "Write a topic",
		Annotations: &mcp.ToolAnnotations{
			DestructiveHint: &destructive, IdempotentHint: true, OpenWorldHint: &closed,
		},
		Description: `Create or replace a topic document of the knowledge base (.kb/<topic>.md):
a procedure, a design note, a convention. To replace one, read it with
knowledge_get first and pass the blob it returned: a topic that changed
since is refused, so that no one's edit is lost. The document is validated
as kbc check does (secrets are refused) and found by the next
knowledge_search; it is not committed, and a person reviews it in the pull
request.`,
	}, w.write)
}

// scopeFor returns the scope directory a write goes to: dir's own scope
// when given, else the deepest scope containing where the server runs.
func (w *writer) scopeFor(dir string) (string, error) {
	if dir == "" {
		return authoring.ScopeDir(w.root, w.here), nil
	}
	rel, err := w.srv.DirArg(dir)
	if err != nil {
		return "", err
	}
	abs := filepath.Join(w.root, filepath.FromSlash(rel))
	if err := noLinksTo(abs); err != nil {
		return "", err
	}
	return abs, nil
}

// noLinksTo refuses a directory that does not exist or is reached through
// a symbolic link. dir is inside the resolved root, so any difference
// after resolving is a link.
func noLinksTo(dir string) error {
	resolved, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return fmt.Errorf("%w: dir %s: %v", errToolArgs, dir, err)
	}
	if resolved != dir {
		return fmt.Errorf("%w: dir %s is reached through a symbolic link; give the directory itself", errToolArgs, dir)
	}
	return nil
}

var errToolArgs = errors.New("invalid arguments")

func (w *writer) remember(ctx context.Context, _ *mcp.CallToolRequest, in rememberArgs) (*mcp.CallToolResult, *writeResult, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	scope, err := w.scopeFor(in.Dir)
	if err != nil {
		return nil, nil, err
	}
	if err := authoring.Reachable(w.root, scope, knowledge.MemoriesDir, w.repo.LeftOut); err != nil {
		return nil, nil, err
	}
	path, err := authoring.Remember(scope, in.Text, authoring.MemoryOptions{
		Tags: in.Tags, Source: in.Source, LockDir: w.repo.GitDir(), Root: w.root, Supersedes: in.Supersedes, Contradicts: in.Contradicts,
	})
	if err != nil {
		return nil, nil, err
	}
	return w.finish(ctx, path, "remembered", w.stageAdd)
}

func (w *writer) forget(ctx context.Context, _ *mcp.CallToolRequest, in forgetArgs) (*mcp.CallToolResult, *writeResult, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	ref := strings.TrimPrefix(strings.TrimSpace(in.Memory), "memory:")
	if ref == "" {
		return nil, nil, fmt.Errorf("%w: memory is empty; give an id or a path", errToolArgs)
	}
	scope, err := w.scopeFor(in.Dir)
	if err != nil {
		return nil, nil, err
	}
	if !isNumber(ref) {
		rel, err := w.srv.PathArg("memory", ref)
		if err != nil {
			return nil, nil, err
		}
		ref = filepath.Join(w.root, filepath.FromSlash(rel))
		if err := noLinksTo(filepath.Dir(ref)); err != nil {
			return nil, nil, err
		}
	}
	path, err := authoring.Forget(w.root, scope, ref)
	if err != nil {
		return nil, nil, err
	}
	return w.finish(ctx, path, "forgot", w.stageRemove)
}

func (w *writer) write(ctx context.Context, _ *mcp.CallToolRequest, in writeArgs) (*mcp.CallToolResult, *writeResult, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	scope, err := w.scopeFor(in.Dir)
	if err != nil {
		return nil, nil, err
	}
	if name, err := authoring.TopicPath(scope, in.Topic); err == nil { // else WriteTopic says what is wrong with the key
		sub, _ := filepath.Rel(filepath.Join(scope, ".kb"), filepath.Dir(name))
		if err := authoring.Reachable(w.root, scope, filepath.ToSlash(sub), w.repo.LeftOut); err != nil {
			return nil, nil, err
		}
	}
	path, replaced, err := authoring.WriteTopic(w.root, scope, in.Topic, in.Content, authoring.TopicOptions{
		Title: in.Title, Tags: in.Tags, Blob: strings.TrimSpace(in.Blob), LockDir: w.repo.GitDir(), Supersedes: in.Supersedes,
	})
	if err != nil {
		return nil, nil, err
	}
	action := "created"
	if replaced {
		action = "replaced"
	}
	return w.finish(ctx, path, action, w.stageAdd)
}

func (w *writer) stageAdd(path string) error { return w.repo.Stage(path) }

func (w *writer) stageRemove(path string) error {
	tracked, err := w.repo.Tracked(path)
	if err != nil || !tracked {
		return err
	}
	return w.repo.Unstage(path)
}

// finish stages the change when asked, refreshes the artifact so that the
// next search sees it, and says what happened and who reviews it.
func (w *writer) finish(ctx context.Context, path, action string, stage func(string) error) (*mcp.CallToolResult, *writeResult, error) {
	rel, _ := filepath.Rel(w.root, path)
	res := &writeResult{Path: filepath.ToSlash(rel), Action: action, Review: reviewNote}
	var warnings []string
	if w.stage {
		if err := stage(path); err != nil {
			warnings = append(warnings, fmt.Sprintf("not staged: %v", err))
		} else {
			res.Staged = true
		}
	}
	if err := refresh(ctx, w.s, w.repo, w.srv.ArtifactDir()); err != nil {
		warnings = append(warnings, fmt.Sprintf("the artifact was not refreshed (%v); run kbc build", err))
	} else {
		res.Indexed = true
		w.srv.Reload()
	}
	res.Warnings = strings.Join(warnings, "; ")
	text := fmt.Sprintf("%s %s. %s", strings.ToUpper(action[:1])+action[1:], res.Path, reviewNote)
	if res.Staged {
		text += " The change is staged in git's index."
	}
	if res.Warnings != "" {
		text += " Warning: " + res.Warnings + "."
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, res, nil
}

func newMCPCommand(s *cli.Streams, g *globalOptions) *cli.Command {
	var (
		index string
		stage bool
	)
	return &cli.Command{
		Name:      "mcp",
		Usage:     "serve the knowledge to agents over MCP (stdio), with tools that write it",
		UsageText: "kbc mcp [--stage] [--index DIR]",
		Description: `Runs a Model Context Protocol server on stdin and stdout with kbq mcp's
four read tools (knowledge_search, knowledge_get, knowledge_list,
knowledge_context) and three that write knowledge into the working tree:

   knowledge_remember  a new memory, exactly as kbc remember writes it
   knowledge_forget    remove a memory, by id or path
   knowledge_write     create or replace a topic (.kb/<topic>.md); replacing
                       needs the blob knowledge_get returned, so that an
                       edit made since is never overwritten

Writes are validated as kbc check validates (secrets refused), never leave
the repository's .kb/ directories (.., absolute paths and symbolic links
are refused), and are never committed: they show up in the pull request
for a person to review. --stage also adds them to git's index. After each
write the artifact is refreshed from the working tree, so the next
knowledge_search finds it. Writes go to the deepest scope containing the
directory the server starts in, or to the scope of a call's dir.

Register it with an agent, for instance:
   claude mcp add kbq -- kbc mcp
   codex mcp add kbq -- kbc mcp
   gemini mcp add kbq kbc mcp
(README.md has the configuration files too.) For read-only access, register
kbq mcp instead.

` + exitCodesHelp,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "index", Complete: cli.Dirs, Usage: "read the artifact in `DIR` (default: $KBQ_INDEX, else .kbq at the repository root)", Destination: &index},
			&cli.BoolFlag{Name: "stage", Usage: "add each write to git's index (never commits)", Destination: &stage},
		},
		Action: func(c *cli.Context) error {
			if c.Args().Present() {
				return cli.Usagef("kbc mcp takes no arguments")
			}
			repo, err := gitsource.Open(g.workDir())
			if err != nil {
				return err
			}
			if repo.Root() == "" {
				return cli.Usagef("a bare repository has no working tree to write knowledge in")
			}
			here, err := g.resolvedWorkDir()
			if err != nil {
				return err
			}
			srv := kbqserve.NewServer(s, index, "kbc", writerInstructions)
			w := &writer{srv: srv, repo: repo, root: repoRoot(repo), here: here, s: s, stage: stage}
			w.register()
			return srv.ServeStdio(c.Context, s, "kbc mcp")
		},
	}
}
