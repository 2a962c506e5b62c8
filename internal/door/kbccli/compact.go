package kbccli

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kbqdev/kbq/artifact"
	"github.com/kbqdev/kbq/authoring"
	"github.com/kbqdev/kbq/compiler"
	"github.com/kbqdev/kbq/gitsource"
	"github.com/kbqdev/kbq/internal/cli"
	"github.com/kbqdev/kbq/internal/llm"
	"github.com/kbqdev/kbq/internal/trust"
	"github.com/kbqdev/kbq/internal/units"
	"github.com/kbqdev/kbq/knowledge"
)

type compactOptions struct {
	key       string
	dryRun    bool
	noRefresh bool
}

func newCompactCommand(s *cli.Streams, g *globalOptions) *cli.Command {
	o := &compactOptions{}
	return &cli.Command{
		Name:      "compact",
		Usage:     "merge a scope's memories, or a directory of topics, into one summary topic for review",
		UsageText: "kbc compact SCOPE | DIR [--key KEY] [--dry-run]",
		Description: `Asks a language model to merge a set of documents into one topic that
supersedes them, and writes it to the working tree for a person to review
and commit; nothing is committed, and the documents stay until a later
kbc prune removes them.

SCOPE (project, or a directory scope such as services/api) compacts that
scope's memories; DIR compacts the documents under a directory of a .kb/
(runbooks, or services/api/.kb/runbooks). Documents already superseded
are left out. The summary cites each source by path, which kbc checks
before writing: a reply that drops a source is refused. Its frontmatter
lists the sources and supersedes them, so that once it is merged searches
and context serve the summary instead.

The model is an OpenAI-compatible chat endpoint set in ` + compiler.ConfigPath + `:

   llm:
     url: http://localhost:11434/v1   # the API's base
     model: llama3.1
     timeout: 5m                       # each request (default 5m)
     retries: 4                        # on 429, 5xx and timeouts

The key (KBQ_LLM_KEY, else OPENAI_API_KEY) is sent only to an endpoint you
name: in KBQ_LLM_URL, or under endpoints: in your own $KBQ_HOME/config.yaml
with the variable its key_env names; a repository never chooses it.

What is sent passes the secret guard first: a source holding what looks
like a credential is refused before anything leaves the machine. An error
(the endpoint unreachable, 401, 429 past the retries, a malformed reply)
leaves the working tree as it was. --dry-run shows what would be sent.
kbc check warns when a category passes compact_threshold tokens (default
50000; 0 for none).

` + exitCodesHelp,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "key", Usage: "write the summary as topic `KEY` of the sources' scope (default summaries/memories-DATE, or DIR/summary-DATE)", Destination: &o.key},
			&cli.BoolFlag{Name: "dry-run", Usage: "list the sources and what would be sent, and send nothing", Destination: &o.dryRun},
			&cli.BoolFlag{Name: "no-refresh", Usage: noRefreshUsage, Destination: &o.noRefresh},
		},
		Action: func(c *cli.Context) error { return runCompact(c, s, g, o) },
	}
}

// compaction is what kbc compact merges: its sources, the scope they are
// in, and how the summary names them.
type compaction struct {
	what     string // "the memories of scope project", for messages
	scope    string
	key      string // the summary's topic key
	sources  []authoring.CompactSource
	existing int // bytes of the sources
}

func runCompact(c *cli.Context, s *cli.Streams, g *globalOptions, o *compactOptions) error {
	if c.NArg() != 1 {
		return cli.Usagef("kbc compact needs one scope (project, services/api) or directory of topics (runbooks)")
	}
	repo, err := gitsource.Open(g.workDir())
	if err != nil {
		return err
	}
	if repo.Root() == "" {
		return cli.Usagef("a bare repository has no working tree to write a summary in")
	}
	snap, err := repo.Worktree()
	if err != nil {
		return err
	}
	cfg, err := compiler.LoadConfig(snap)
	if err != nil {
		return err
	}
	if cfg.Diagnostics.Errors() > 0 {
		return fmt.Errorf("%s has errors (kbc check shows them): fix them first", compiler.ConfigPath)
	}
	if !o.noRefresh {
		if err := refresh(c.Context, s, repo, ""); err != nil {
			return fmt.Errorf("bring the artifact up to date: %w", err)
		}
	}
	m, err := artifact.Read(filepath.Join(repo.Root(), artifact.DefaultDir))
	if err != nil {
		return fmt.Errorf("%w: build it first with kbc build", err)
	}
	now := time.Now()
	job, err := selectCompaction(m, c.Args().First(), o.key, now)
	if err != nil {
		return err
	}
	for i := range job.sources {
		src := &job.sources[i]
		data, err := os.ReadFile(filepath.Join(repo.Root(), filepath.FromSlash(src.Path)))
		if err != nil {
			return fmt.Errorf("read %s: %w", src.Path, err)
		}
		src.Text = string(data)
		job.existing += len(data)
	}
	scopeDir, _ := knowledge.ScopeDir(job.scope)
	scopeDir = filepath.Join(repo.Root(), filepath.FromSlash(scopeDir))
	if err := checkSummaryKey(repo.Root(), scopeDir, job.key); err != nil {
		return err
	}
	system, user := authoring.CompactPrompt(job.sources)
	// The secret guard runs on what is sent, each source as it is placed.
	var secrets compiler.Diagnostics
	for _, src := range job.sources {
		secrets = append(secrets, compiler.FindSecrets(cfg, src.Path, []byte(src.Text))...)
	}
	if len(secrets) > 0 {
		for _, d := range secrets {
			fmt.Fprintln(s.Err, d)
		}
		return fmt.Errorf("%d %s in the sources would be sent to the model: remove %s (or mark a line that is not one kbq:allow-secret), then compact again; nothing was sent",
			len(secrets), plural(len(secrets), "secret", "secrets"), plural(len(secrets), "it", "them"))
	}
	if o.dryRun {
		return writeCompactPlan(s, job, len(system)+len(user))
	}
	if cfg.LLM == nil {
		return cli.Usagef("kbc compact needs a language model: set llm: url and model in %s (kbc compact --help shows how)", compiler.ConfigPath)
	}
	// The repository names the endpoint, never the key: that goes only to
	// an endpoint the user named (package trust).
	grant := trust.Must(s.Getenv, func(err error) { fmt.Fprintf(s.Err, "kbc: %v\n", err) }).Key(trust.LLM, cfg.LLM.URL, false)
	client := &llm.Client{URL: cfg.LLM.URL, Model: cfg.LLM.Model, Key: grant.Key, KeyEnv: grant.Env, Advice: grant.Advice, Timeout: cfg.LLM.Timeout, Retries: cfg.LLM.Retries}
	fmt.Fprintf(s.Err, "kbc: asking %s (%s) to merge %d documents, about %s tokens\n", client.Model, client.Endpoint(), len(job.sources), units.Count(int64(job.existing/4)))
	reply, err := client.Reply(c.Context, system, user)
	if err != nil {
		return fmt.Errorf("%w; nothing was written", err)
	}
	summary, err := authoring.CompactSummary(reply, job.sources, job.what, now)
	if err != nil {
		return err
	}
	path, _, err := authoring.WriteTopic(repo.Root(), scopeDir, job.key, summary, authoring.TopicOptions{LockDir: repo.GitDir()})
	if err != nil {
		return err
	}
	shown := displayRepoPath(repo.Root(), path)
	fmt.Fprintln(s.Out, shown)
	fmt.Fprintf(s.Err, "kbc: wrote %s, %s merged into about %s tokens from %s; it supersedes them: review it, then commit it\n",
		shown, job.what, units.Count(int64(len(summary)/4)), units.Count(int64(job.existing/4)))
	if !o.noRefresh {
		refreshArtifact(c.Context, s, repo)
	}
	return nil
}

// selectCompaction finds what target names in m: a scope's memories, or
// the documents under a directory of a .kb/.
func selectCompaction(m *artifact.Manifest, target, key string, now time.Time) (*compaction, error) {
	target = strings.Trim(filepath.ToSlash(strings.TrimSpace(target)), "/")
	date := now.UTC().Format("2006-01-02")
	job := &compaction{}
	var picked []artifact.Document
	scopes := map[string]bool{}
	for _, d := range m.Documents {
		scopes[d.Scope] = true
	}
	switch {
	case target == "global":
		return nil, cli.Usagef("the global scope is outside the repository: kbc compact writes summaries only into the repository's own .kb/")
	case scopes[target]:
		job.what, job.scope, job.key = "the memories of scope "+target, target, "summaries/memories-"+date
		for _, d := range m.Documents {
			if d.Scope == target && d.Kind == knowledge.KindMemory {
				picked = append(picked, d)
			}
		}
	default:
		var prefix string
		for _, p := range []string{target + "/", knowledge.Dir + "/" + target + "/"} {
			if slices.ContainsFunc(m.Documents, func(d artifact.Document) bool { return strings.HasPrefix(d.Path, p) }) {
				prefix = p
				break
			}
		}
		// The directory inside a .kb/ the target names: "" for a .kb/
		// itself or a directory above one. Memories are merged only when
		// it is theirs.
		inside := ""
		if i := strings.LastIndex(prefix, knowledge.Dir+"/"); i >= 0 {
			inside = strings.Trim(prefix[i+len(knowledge.Dir)+1:], "/")
		}
		kindDir, _, _ := strings.Cut(inside, "/")
		for _, d := range m.Documents {
			if prefix != "" && strings.HasPrefix(d.Path, prefix) && d.Kind != knowledge.KindContext &&
				(d.Kind != knowledge.KindMemory || kindDir == knowledge.MemoriesDir) {
				picked = append(picked, d)
			}
		}
		if len(picked) == 0 {
			return nil, cli.Usagef("%q is neither a scope of the artifact (%s) nor a directory holding knowledge", target, strings.Join(sortedKeys(scopes), ", "))
		}
		job.scope = picked[0].Scope
		for _, d := range picked {
			if d.Scope != job.scope {
				return nil, cli.Usagef("%s holds documents of the scopes %s and %s: compact one scope's at a time", target, job.scope, d.Scope)
			}
		}
		job.what, job.key = "the documents of "+target, inside+"/summary-"+date
		if inside == "" || knowledge.IsKindDir(kindDir) {
			// Not a directory of topics: the summary goes beside the others.
			job.key = "summaries/" + strings.ReplaceAll(cmp.Or(inside, "topics"), "/", "-") + "-" + date
		}
	}
	for _, d := range picked {
		if _, retired := m.Retired[d.Path]; retired {
			continue
		}
		src := authoring.CompactSource{Path: d.Path, Ref: d.Topic, Updated: d.Updated}
		if d.Kind == knowledge.KindMemory {
			src.Ref = "memory:" + strconv.Itoa(d.ID)
		}
		if d.Uncommitted {
			src.Updated = now.UTC().Format(time.RFC3339)
		}
		job.sources = append(job.sources, src)
	}
	if len(job.sources) < 2 {
		return nil, cli.Usagef("%s: %d %s not already superseded: there is nothing to merge", job.what, len(job.sources), plural(len(job.sources), "document is", "documents are"))
	}
	if key != "" {
		job.key = key
	}
	return job, nil
}

// checkSummaryKey refuses, before anything is sent, a summary key that
// is not a topic's or names a file that exists: a summary is never
// written over one.
func checkSummaryKey(root, scopeDir, key string) error {
	name, err := authoring.TopicPath(scopeDir, key)
	if err != nil {
		return cli.Usagef("--key: %v", err)
	}
	if _, err := os.Lstat(name); err == nil {
		return cli.Usagef("%s exists: choose another --key; a summary is never written over a file", displayRepoPath(root, name))
	}
	return nil
}

func sortedKeys(set map[string]bool) []string {
	keys := make([]string, 0, len(set))
	for k := range set {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// writeCompactPlan says what kbc compact would send.
func writeCompactPlan(s *cli.Streams, job *compaction, sent int) error {
	fmt.Fprintf(s.Out, "%s: %d documents, about %s tokens (%s sent with the instructions)\n", job.what, len(job.sources), units.Count(int64(job.existing/4)), units.Bytes(int64(sent)))
	for _, src := range job.sources {
		fmt.Fprintf(s.Out, "  %s  %s\n", src.Path, src.Ref)
	}
	fmt.Fprintf(s.Out, "the summary would be topic %s of scope %s\n", job.key, job.scope)
	return nil
}
