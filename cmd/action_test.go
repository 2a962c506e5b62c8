package cmd_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/kbqdev/kbq/embedding/embeddingtest"
	"github.com/kbqdev/kbq/internal/postgres/pgtest"
	"github.com/kbqdev/kbq/internal/testreq"
	"go.yaml.in/yaml/v3"
)

// The GitHub Action, run as the runner runs a composite action's steps:
// in order, each `if:` evaluated, `${{ }}` expressions substituted,
// GITHUB_OUTPUT, GITHUB_STEP_SUMMARY, GITHUB_PATH and GITHUB_EVENT_PATH
// honoured, with a fake gh that records its calls. The steps of other
// actions (setup-go, cache, upload-artifact) are stood in for: the cache
// of the binaries hits with binaries built by the test.

type actionStep struct {
	ID               string            `yaml:"id"`
	Name             string            `yaml:"name"`
	If               string            `yaml:"if"`
	Uses             string            `yaml:"uses"`
	Run              string            `yaml:"run"`
	Shell            string            `yaml:"shell"`
	WorkingDirectory string            `yaml:"working-directory"`
	Env              map[string]string `yaml:"env"`
	With             map[string]string `yaml:"with"`
}

type action struct {
	Inputs map[string]struct {
		Default string `yaml:"default"`
	} `yaml:"inputs"`
	Runs struct {
		Using string       `yaml:"using"`
		Steps []actionStep `yaml:"steps"`
	} `yaml:"runs"`
}

// runner runs an action's steps.
type runner struct {
	t         *testing.T
	ctx       map[string]any // the expression contexts: github, inputs, runner, steps
	env       []string
	workspace string
	prebuilt  string // binaries for the cache of kbc and kbq to hold
	failed    bool
	log       []string          // "name: outcome" of each step
	printed   map[string]string // what each step printed, by name
	caches    string            // where cache/save keeps what cache/restore brings back
}

func (r *runner) steps() map[string]any { return r.ctx["steps"].(map[string]any) }

// lookup resolves a dotted property of the contexts; "" when missing.
func (r *runner) lookup(path string) any {
	var cur any = r.ctx
	for _, part := range strings.Split(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return ""
		}
		if cur, ok = m[part]; !ok {
			return ""
		}
	}
	return cur
}

var exprToken = regexp.MustCompile(`\s*(\(|\)|&&|\|\||==|!=|!|'[^']*'|[A-Za-z_][A-Za-z0-9_.-]*\(\)|[A-Za-z_][A-Za-z0-9_.-]*)`)

// eval evaluates the subset of GitHub's expression language the action
// uses: properties, 'strings', ==, !=, !, &&, ||, parentheses, and the
// status functions.
func (r *runner) eval(expr string) any {
	var toks []string
	for rest := strings.TrimSpace(expr); rest != ""; rest = strings.TrimLeft(rest, " ") {
		m := exprToken.FindStringSubmatchIndex(rest)
		if m == nil || m[0] != 0 {
			r.t.Fatalf("expression %q: cannot read %q", expr, rest)
		}
		toks = append(toks, rest[m[2]:m[3]])
		rest = rest[m[1]:]
	}
	p := &exprParser{r: r, toks: toks}
	v := p.or()
	if p.i != len(toks) {
		r.t.Fatalf("expression %q: left over %v", expr, toks[p.i:])
	}
	return v
}

type exprParser struct {
	r    *runner
	toks []string
	i    int
}

func (p *exprParser) peek() string {
	if p.i < len(p.toks) {
		return p.toks[p.i]
	}
	return ""
}

func truthy(v any) bool {
	switch v := v.(type) {
	case bool:
		return v
	case string:
		return v != ""
	case nil:
		return false
	}
	return true
}

func text(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case bool:
		return fmt.Sprint(v)
	case float64:
		return fmt.Sprint(v)
	}
	return ""
}

func (p *exprParser) or() any {
	v := p.and()
	for p.peek() == "||" {
		p.i++
		w := p.and()
		if !truthy(v) {
			v = w
		}
	}
	return v
}

func (p *exprParser) and() any {
	v := p.cmp()
	for p.peek() == "&&" {
		p.i++
		w := p.cmp()
		if truthy(v) {
			v = w
		}
	}
	return v
}

func (p *exprParser) cmp() any {
	v := p.unary()
	for op := p.peek(); op == "==" || op == "!="; op = p.peek() {
		p.i++
		w := p.unary()
		v = (text(v) == text(w)) == (op == "==")
	}
	return v
}

func (p *exprParser) unary() any {
	switch t := p.peek(); {
	case t == "!":
		p.i++
		return !truthy(p.unary())
	case t == "(":
		p.i++
		v := p.or()
		p.i++ // )
		return v
	case strings.HasPrefix(t, "'"):
		p.i++
		return strings.Trim(t, "'")
	case t == "always()":
		p.i++
		return true
	case t == "success()":
		p.i++
		return !p.r.failed
	case t == "failure()":
		p.i++
		return p.r.failed
	case t == "true" || t == "false":
		p.i++
		return t == "true"
	default:
		p.i++
		return p.r.lookup(t)
	}
}

var exprSub = regexp.MustCompile(`\$\{\{(.*?)\}\}`)

// subst replaces the ${{ }} expressions of s.
func (r *runner) subst(s string) string {
	return exprSub.ReplaceAllStringFunc(s, func(m string) string {
		return text(r.eval(exprSub.FindStringSubmatch(m)[1]))
	})
}

func (r *runner) run(a *action) {
	for _, st := range a.Runs.Steps {
		cond := strings.TrimSpace(st.If)
		var ok bool
		switch {
		case cond == "":
			ok = !r.failed
		case strings.Contains(cond, "always()") || strings.Contains(cond, "failure()"):
			ok = truthy(r.eval(cond))
		default:
			ok = !r.failed && truthy(r.eval(cond)) // success() && the condition
		}
		outputs := map[string]any{}
		outcome := "skipped"
		if ok {
			outcome = "success"
			if err := r.step(st, outputs); err != nil {
				outcome = "failure"
				r.failed = true
			}
		}
		if st.ID != "" {
			r.steps()[st.ID] = map[string]any{"outputs": outputs, "outcome": outcome}
		}
		r.log = append(r.log, cmp(st.Name, st.Uses)+": "+outcome)
	}
}

func cmp(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// step runs one step, recording its outputs.
func (r *runner) step(st actionStep, outputs map[string]any) error {
	with := map[string]string{}
	for k, v := range st.With {
		with[k] = r.subst(v)
	}
	switch {
	case strings.HasPrefix(st.Uses, "actions/cache@"):
		// The binaries' cache holds what the test built.
		path := with["path"]
		if strings.Contains(with["key"], "kbq-bin-") {
			if err := os.MkdirAll(path, 0o755); err != nil {
				return err
			}
			for _, name := range []string{"kbc", "kbq"} {
				data, err := os.ReadFile(filepath.Join(r.prebuilt, name))
				if err != nil {
					return err
				}
				if err := os.WriteFile(filepath.Join(path, name), data, 0o755); err != nil {
					return err
				}
			}
			outputs["cache-hit"] = "true"
		}
		return nil
	case strings.HasPrefix(st.Uses, "actions/cache/save@") && r.caches == "":
		r.t.Fatal("the runner has no cache store")
		return nil
	case strings.HasPrefix(st.Uses, "actions/cache/save@"):
		// Kept by key, in the runner's store.
		return exec.Command("cp", "-a", filepath.Join(r.workspace, with["path"]), filepath.Join(r.caches, with["key"])).Run()
	case strings.HasPrefix(st.Uses, "actions/cache/restore@"):
		// The exact key, else the newest key with the prefix.
		entries, _ := os.ReadDir(r.caches)
		var found string
		for _, e := range entries {
			if e.Name() == with["key"] || found == "" && strings.HasPrefix(e.Name(), with["restore-keys"]) {
				found = e.Name()
			}
		}
		if found == "" {
			return nil
		}
		outputs["cache-matched-key"] = found
		return exec.Command("cp", "-a", filepath.Join(r.caches, found), filepath.Join(r.workspace, with["path"])).Run()
	case st.Uses != "":
		return nil // setup-go, upload-artifact
	}
	dir := r.workspace
	if st.WorkingDirectory != "" {
		dir = r.subst(st.WorkingDirectory)
	}
	tmp := r.t.TempDir()
	script, output, path := filepath.Join(tmp, "step.sh"), filepath.Join(tmp, "output"), filepath.Join(tmp, "path")
	os.WriteFile(script, []byte(r.subst(st.Run)), 0o644)
	os.WriteFile(output, nil, 0o644)
	os.WriteFile(path, nil, 0o644)
	cmd := exec.Command("bash", "--noprofile", "--norc", "-eo", "pipefail", script)
	cmd.Dir = dir
	cmd.Env = append(slices.Clone(r.env), "GITHUB_OUTPUT="+output, "GITHUB_PATH="+path)
	for k, v := range st.Env {
		cmd.Env = append(cmd.Env, k+"="+r.subst(v))
	}
	out, err := cmd.CombinedOutput()
	r.t.Logf("step %s:\n%s", cmp(st.Name, st.ID), out)
	if r.printed == nil {
		r.printed = map[string]string{}
	}
	r.printed[st.Name] = string(out)
	data, _ := os.ReadFile(output)
	for _, line := range strings.Split(string(data), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			outputs[k] = v
		}
	}
	added, _ := os.ReadFile(path)
	for _, p := range strings.Fields(string(added)) {
		for i, e := range r.env {
			if strings.HasPrefix(e, "PATH=") {
				r.env[i] = "PATH=" + p + ":" + strings.TrimPrefix(e, "PATH=")
			}
		}
	}
	return err
}

func TestGitHubAction(t *testing.T) {
	requireTools(t, "builds kbc and kbq", "git", "go", "bash")
	a, actionPath := loadAction(t)
	if a.Runs.Using != "composite" {
		t.Fatalf("runs.using %q", a.Runs.Using)
	}
	prebuilt := buildTools(t, "./cmd/kbc", "./cmd/kbq")
	// A fake gh records its calls.
	fakeBin := t.TempDir()
	os.WriteFile(filepath.Join(fakeBin, "gh"), []byte("#!/bin/sh\necho \"$@\" >> \"$GH_LOG\"\n[ -z \"$GH_FAIL\" ]\n"), 0o755)

	for _, tc := range []struct {
		name, event   string
		bad, fork     bool
		ghFail        bool
		ref           string // GITHUB_REF of a push; with a database, published if main's
		wantFail      bool
		wantComment   bool
		wantInSummary string
	}{
		{name: "valid pull request", event: "pull_request", wantComment: true, wantInSummary: "deploy"},
		{name: "invalid pull request", event: "pull_request", bad: true, wantFail: true, wantComment: true, wantInSummary: "error"},
		{name: "fork pull request", event: "pull_request", fork: true, wantInSummary: "deploy"},
		{name: "read-only token", event: "pull_request", ghFail: true, wantComment: true, wantInSummary: "deploy"},
		{name: "push to main", event: "push"},
		{name: "push to main publishes", event: "push", ref: "refs/heads/main"},
		{name: "push to a branch does not publish", event: "push", ref: "refs/heads/feature"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			origin, ws := filepath.Join(dir, "origin.git"), filepath.Join(dir, "ws")
			git := func(wd string, args ...string) string {
				cmd := exec.Command("git", args...)
				cmd.Dir = wd
				cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@b", "GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@b")
				out, err := cmd.CombinedOutput()
				if err != nil {
					t.Fatalf("git %v: %v %s", args, err, out)
				}
				return strings.TrimSpace(string(out))
			}
			git(dir, "init", "-q", "--bare", "-b", "main", origin)
			git(dir, "clone", "-q", origin, ws)
			os.MkdirAll(filepath.Join(ws, ".kb"), 0o755)
			os.WriteFile(filepath.Join(ws, ".kb", "base.md"), []byte("# Base\n\nThe base note.\n"), 0o644)
			git(ws, "add", "-A")
			git(ws, "commit", "-q", "-m", "base")
			git(ws, "push", "-q", "origin", "HEAD:main")
			base := git(ws, "rev-parse", "HEAD")
			git(ws, "checkout", "-q", "-b", "feature")
			os.WriteFile(filepath.Join(ws, ".kb", "deploy.md"), []byte("# Deploy\n\nDeploy with make deploy.\n"), 0o644)
			os.WriteFile(filepath.Join(ws, ".kb", "evals.yaml"), []byte("- query: how do we deploy\n  expect: [deploy]\n"), 0o644)
			if tc.bad {
				os.MkdirAll(filepath.Join(ws, ".kb", "memories"), 0o755)
				os.WriteFile(filepath.Join(ws, ".kb", "memories", "001-x.md"), []byte("---\nid: one\n---\nx\n"), 0o644)
			}
			git(ws, "add", "-A")
			git(ws, "commit", "-q", "-m", "change")
			head := git(ws, "rev-parse", "HEAD")

			temp := filepath.Join(dir, "runner-temp")
			os.MkdirAll(temp, 0o755)
			headRepo := "org/repo"
			if tc.fork {
				headRepo = "someone/repo"
			}
			event := map[string]any{"repository": map[string]any{"default_branch": "main", "visibility": "internal"}}
			if tc.event == "pull_request" {
				event["pull_request"] = map[string]any{"number": 7, "base": map[string]any{"sha": base},
					"head": map[string]any{"sha": head, "repo": map[string]any{"full_name": headRepo}}}
			}
			eventPath := filepath.Join(dir, "event.json")
			ev, _ := json.Marshal(event)
			os.WriteFile(eventPath, ev, 0o644)
			summary, ghLog := filepath.Join(dir, "summary.md"), filepath.Join(dir, "gh.log")
			os.WriteFile(summary, nil, 0o644)

			inputs := map[string]any{}
			for k, v := range a.Inputs {
				inputs[k] = v.Default
			}
			inputs["github-token"] = "token"
			db := ""
			if tc.ref != "" {
				url, err := pgtest.NewDB()
				if errors.Is(err, pgtest.ErrNoServer) {
					testreq.Skip(t, testreq.Postgres, err)
				}
				if err != nil {
					t.Fatal(err)
				}
				db, inputs["database-url"] = url, url
			}
			var evAny map[string]any
			json.Unmarshal(ev, &evAny)
			r := &runner{t: t, workspace: ws, prebuilt: prebuilt, caches: t.TempDir(), ctx: map[string]any{
				"github": map[string]any{"event_name": tc.event, "sha": head, "repository": "org/repo",
					"action_path": actionPath, "token": "token", "event": evAny},
				"inputs": inputs,
				"runner": map[string]any{"os": "Linux", "arch": "X64", "temp": temp},
				"steps":  map[string]any{},
			}}
			r.env = append(os.Environ(), "PATH="+fakeBin+":"+os.Getenv("PATH"), "RUNNER_TEMP="+temp,
				"GITHUB_STEP_SUMMARY="+summary, "GITHUB_EVENT_PATH="+eventPath, "GITHUB_WORKSPACE="+ws,
				"GH_LOG="+ghLog, "CI=true", "HOME="+dir, "KBQ_USAGE=off")
			if tc.ghFail {
				r.env = append(r.env, "GH_FAIL=1")
			}
			if tc.ref != "" {
				r.env = append(r.env, "GITHUB_REF="+tc.ref)
			}
			r.run(&a)
			t.Logf("steps:\n%s", strings.Join(r.log, "\n"))

			if r.failed != tc.wantFail {
				t.Errorf("the job failed: %v, want %v", r.failed, tc.wantFail)
			}
			calls, _ := os.ReadFile(ghLog)
			if commented := strings.Contains(string(calls), "pr comment 7"); commented != tc.wantComment {
				t.Errorf("gh was called with %q; a comment wanted: %v", calls, tc.wantComment)
			}
			report, _ := os.ReadFile(summary)
			if tc.wantInSummary != "" && !strings.Contains(strings.ToLower(string(report)), tc.wantInSummary) {
				t.Errorf("the job summary lacks %q:\n%s", tc.wantInSummary, report)
			}
			if tc.event == "push" && len(report) != 0 {
				t.Errorf("a push wrote a summary:\n%s", report)
			}
			if db != "" {
				out, err := exec.Command("psql", db, "-tA", "-c", "SELECT name || ' ' || commit || ' ' || visibility FROM kbq_repo").CombinedOutput()
				published := strings.TrimSpace(string(out))
				switch {
				case tc.ref == "refs/heads/main" && (err != nil || published != "github.com/org/repo "+head+" internal"):
					t.Errorf("a push to main published %q (%v), want github.com/org/repo %s internal", published, err, head)
				case tc.ref != "refs/heads/main" && err == nil && published != "":
					t.Errorf("a push to another branch published %q", published)
				}
			}
			if !tc.bad {
				if _, err := os.Stat(filepath.Join(ws, ".kbq", "manifest.json")); err != nil {
					t.Errorf("no artifact was built: %v", err)
				}
				// The step docs/ci.md recommends after the action.
				eval := exec.Command("bash", "-c", "kbq eval --min-ndcg 0.5")
				eval.Dir, eval.Env = ws, r.env
				if out, err := eval.CombinedOutput(); err != nil {
					t.Errorf("kbq eval after the action: %v\n%s", err, out)
				}
			}
		})
	}
}

// With embeddings on, the action keeps the artifact between runs, so that
// a pull request changing one file embeds that file's chunks only.
func TestGitHubActionKeepsVectors(t *testing.T) {
	requireTools(t, "builds kbc and kbq", "git", "go", "bash", "cp")
	a, actionPath := loadAction(t)
	prebuilt := buildTools(t, "./cmd/kbc", "./cmd/kbq")
	dir := t.TempDir()
	models := filepath.Join(dir, "models")
	if err := embeddingtest.Default.Write(filepath.Join(models, "tiny")); err != nil {
		t.Fatal(err)
	}
	ws, caches := filepath.Join(dir, "ws"), filepath.Join(dir, "caches")
	os.MkdirAll(filepath.Join(ws, ".kb"), 0o755)
	os.MkdirAll(caches, 0o755)
	git := func(args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir = ws
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@b", "GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@b")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("init", "-q", "-b", "main")
	os.WriteFile(filepath.Join(ws, ".kb", "config.yaml"), []byte("embeddings:\n  model: tiny\n"), 0o644)
	for i := range 20 {
		os.WriteFile(filepath.Join(ws, ".kb", fmt.Sprintf("n%02d.md", i)), []byte(fmt.Sprintf("# Note %d\n\nThe note number %d says something of its own.\n", i, i)), 0o644)
	}
	git("add", "-A")
	git("commit", "-q", "-m", "notes")

	runOnce := func() string {
		temp := t.TempDir()
		r := &runner{t: t, workspace: ws, prebuilt: prebuilt, caches: caches, ctx: map[string]any{
			"github": map[string]any{"event_name": "push", "sha": git("rev-parse", "HEAD"), "repository": "org/repo", "action_path": actionPath},
			"inputs": map[string]any{"comment": "false", "upload": "false"},
			"runner": map[string]any{"os": "Linux", "arch": "X64", "temp": temp},
			"steps":  map[string]any{},
		}}
		r.env = append(os.Environ(), "RUNNER_TEMP="+temp, "CI=true", "HOME="+dir, "KBQ_USAGE=off", "KBQ_MODELS="+models,
			"GITHUB_STEP_SUMMARY="+filepath.Join(temp, "summary"))
		os.RemoveAll(filepath.Join(ws, ".kbq")) // a fresh runner: only the cache carries the artifact
		r.run(&a)
		if r.failed {
			t.Fatalf("the job failed: %s", strings.Join(r.log, "\n"))
		}
		return r.printed["Build the artifact"]
	}
	first := runOnce()
	if !strings.Contains(first, "20 embedded") {
		t.Fatalf("first run: %s", first)
	}
	os.WriteFile(filepath.Join(ws, ".kb", "n07.md"), []byte("# Note 7\n\nThe note number 7 now says something new.\n"), 0o644)
	git("commit", "-q", "-am", "one note")
	if second := runOnce(); !strings.Contains(second, " 1 embedded") {
		t.Errorf("after a one-file change the build embedded more than that file: %s", second)
	}
}

// requireTools skips t in -short mode (it builds, as why says) or when a
// tool it runs is not installed.
func requireTools(t *testing.T, why string, tools ...string) {
	t.Helper()
	if testing.Short() {
		t.Skip(why)
	}
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			testreq.Skipf(t, testreq.Tools, "%s is not installed", tool)
		}
	}
}

// loadAction reads the repository's action.yml and returns it with the
// repository's path, the action's.
func loadAction(t *testing.T) (action, string) {
	t.Helper()
	data, err := os.ReadFile("../action.yml")
	if err != nil {
		t.Fatal(err)
	}
	var a action
	if err := yaml.Unmarshal(data, &a); err != nil {
		t.Fatal(err)
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	return a, root
}

// buildTools builds the repository's packages into a temporary directory
// and returns it.
func buildTools(t *testing.T, pkgs ...string) string {
	t.Helper()
	dir := t.TempDir()
	build := exec.Command("go", append([]string{"build", "-o", dir + "/"}, pkgs...)...)
	build.Dir = ".."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v %s", err, out)
	}
	return dir
}
