package compiler_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kbqdev/kbq/artifact"
	"github.com/kbqdev/kbq/compiler"
	"github.com/kbqdev/kbq/internal/testkb"
)

func TestParseConfig(t *testing.T) {
	c := compiler.ParseConfig([]byte(`# the project's settings
context_files: [AGENTS.md, COPILOT.md]
max_file_size: 512KiB
budgets:
  global: 1KiB
  project: 4096
  total: 30KiB
ignore:
  - drafts/
  - "*.wip.md"
secrets:
  allow:
    - path: docs/examples/**
    - rule: aws access key
      value: AKIAIOSFODNN7EXAMPL3
    - pattern: ^sk_test_
`))
	if len(c.Diagnostics) > 0 {
		t.Fatalf("diagnostics: %v", c.Diagnostics)
	}
	if !slices.Equal(c.ContextFiles, []string{"AGENTS.md", "COPILOT.md"}) || c.MaxFileSize != 512<<10 {
		t.Errorf("context files %v, size %d", c.ContextFiles, c.MaxFileSize)
	}
	want := artifact.Budgets{Global: 1 << 10, Project: 4096, Total: 30 << 10}
	if c.Budgets != want {
		t.Errorf("budgets %+v, want %+v", c.Budgets, want)
	}
	if !c.Ignored("a/drafts/x.md") || !c.Ignored("x.wip.md") || c.Ignored("x.md") {
		t.Error("ignore patterns do not match as in .gitignore")
	}
	if len(c.Secrets) != 3 || c.Secrets[1].Rule != "aws access key" || c.Secrets[2].Pattern == nil {
		t.Errorf("secrets %+v", c.Secrets)
	}
	if c.Embeddings != nil {
		t.Errorf("embeddings %+v in a configuration without any", c.Embeddings)
	}
	if c.Hash == "" || compiler.ParseConfig([]byte("ignore: [x]\n")).Hash == c.Hash {
		t.Error("the hash does not identify the file")
	}
}

func TestParseEmbeddingsConfig(t *testing.T) {
	for _, tt := range []struct {
		yaml string
		want compiler.EmbeddingsConfig
	}{
		{"embeddings:\n  model: all-MiniLM-L6-v2\n", compiler.EmbeddingsConfig{Provider: "local", Model: "all-MiniLM-L6-v2"}},
		{"embeddings:\n  url: http://localhost:11434/v1\n  model: nomic-embed-text\n  batch_size: 16\n  timeout: 2m\n",
			compiler.EmbeddingsConfig{Provider: "openai", Model: "nomic-embed-text", URL: "http://localhost:11434/v1", Batch: 16, Timeout: 2 * time.Minute}},
	} {
		c := compiler.ParseConfig([]byte(tt.yaml))
		if len(c.Diagnostics) > 0 || c.Embeddings == nil || *c.Embeddings != tt.want {
			t.Errorf("%q: embeddings %+v (diagnostics %v), want %+v", tt.yaml, c.Embeddings, c.Diagnostics, tt.want)
		}
	}
}

// A repository's key_env is a warning at its position and is not kept: a
// repository never chooses which of the user's variables is sent.
func TestRepositoryKeyEnvIsNotRead(t *testing.T) {
	for _, section := range []string{"embeddings:\n  provider: openai\n  model: m\n", "llm:\n  url: http://localhost:1/v1\n  model: m\n"} {
		c := compiler.ParseConfig([]byte(section + "  key_env: KBQ_DATABASE_URL\n"))
		if len(c.Diagnostics) != 1 || c.Diagnostics[0].Severity != compiler.Warning || c.Diagnostics[0].Line != 4 ||
			!strings.Contains(c.Diagnostics[0].Message, "key_env is not read") {
			t.Errorf("%q: diagnostics %v, want one warning at line 4 that key_env is not read", section, c.Diagnostics)
		}
		if c.Embeddings == nil && c.LLM == nil {
			t.Errorf("%q: the section was dropped for its key_env", section)
		}
	}
}

func TestConfigErrorsHavePositions(t *testing.T) {
	for _, tt := range []struct {
		name, yaml string
		want       []string // line:col: message fragment
	}{
		{"not yaml", "a: [b\n", []string{"2:1: invalid YAML"}},
		{"not a mapping", "- a\n", []string{"1:1: the configuration must be a mapping of settings, not a list"}},
		{"unknown key", "contex_files: [A.md]\nbudget: {}\n", []string{
			`1:1: unknown setting "contex_files": did you mean "context_files"?`,
			`2:1: unknown setting "budget": did you mean "budgets"?`}},
		{"wrong types", "context_files: AGENTS.md\nignore: [1, '']\nmax_file_size: [1]\n", []string{
			`1:16: context_files must be a list of strings, not the string "AGENTS.md"`,
			"2:10: ignore: each entry must be a non-empty string, not an integer",
			"2:13: ignore: each entry must be a non-empty string",
			"3:16: max_file_size must be a size such as 5MiB or 4096, not a list"}},
		{"paths as context files", "context_files:\n  - docs/AGENTS.md\n", []string{`2:5: context_files: "docs/AGENTS.md" is a path`}},
		{"bad sizes", "max_file_size: lots\nbudgets:\n  project: -1\n  globl: 1KiB\n", []string{
			`1:16: max_file_size: "lots" is not a size`,
			`3:12: budgets.project: "-1" is not a size`,
			`4:3: unknown key in budgets "globl": did you mean "global"?`}},
		{"bad allowances", "secrets:\n  allow:\n    - rule: aws acess key\n    - pattern: '(['\n    - {}\n    - path: ''\n  deny: []\n", []string{
			`3:13: secrets.allow: unknown rule "aws acess key": did you mean "aws access key"?`,
			"4:16: secrets.allow: pattern \"([\": missing closing ]",
			"5:7: secrets.allow: an entry needs at least one of path, rule, value, pattern",
			"6:13: secrets.allow: path must be a non-empty string",
			`7:3: unknown key in secrets "deny"`}},
		{"duplicate key", "ignore: [a]\nbudgets:\n  total: 1KiB\n  total: 2KiB\nignore: [b]\n", []string{`4:3: "total" is set twice (first on line 3)`, `5:1: "ignore" is set twice (first on line 1)`}},
		{"binary", "ignore: [a]\x00\n", []string{"1:12: binary file"}},
		{"bad embeddings", "embeddings:\n  provider: ollama\n  url: localhost:11434\n  key_env: sk-abc123\n  batch_size: 0\n  timeout: soon\n  dims: 3\n", []string{
			`2:13: embeddings.provider: "ollama" is not a provider`,
			`3:8: embeddings.url: "localhost:11434" is not an http:// or https:// URL`,
			"4:12: embeddings.key_env names the environment variable that holds the key",
			`5:15: embeddings.batch_size: "0" is not a number of texts from 1 to 2048`,
			`6:12: embeddings.timeout: "soon" is not a duration`,
			`7:3: unknown key in embeddings "dims"`}},
		{"local embeddings without a model", "embeddings: {provider: local}\n", []string{"1:13: embeddings: name the model"}},
		{"bad llm", "llm:\n  url: ftp://x\n  key_env: sk-abc123\n  timeout: 0s\n  retries: many\n  temperature: 1\ncompact_threshold: lots\n", []string{
			`2:8: llm.url: "ftp://x" is not an http:// or https:// URL`,
			"3:12: llm.key_env names the environment variable that holds the key",
			`4:12: llm.timeout: "0s" is not a duration`,
			`5:12: llm.retries: "many" is not a number of retries from 0 to 10`,
			`6:3: unknown key in llm "temperature"`,
			`7:20: compact_threshold: "lots" is not a number of tokens`}},
		{"llm without a model", "llm: {url: 'http://localhost:11434/v1'}\n", []string{"1:6: llm: name the endpoint and its model"}},
		{"local embeddings by path", "embeddings:\n  model: ../models/mini\n", []string{`2:3: embeddings.model: "../models/mini" is a path`}},
		{"local embeddings with an endpoint's settings", "embeddings:\n  model: mini\n  provider: local\n  timeout: 1s\n", []string{"4:12: embeddings.timeout is a setting of the openai provider"}},
		{"embeddings as a string", "embeddings: all-MiniLM-L6-v2\n", []string{`1:13: embeddings must be a mapping of provider, model`}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := compiler.ParseConfig([]byte(tt.yaml))
			var got []string
			for _, d := range c.Diagnostics {
				if d.Path != compiler.ConfigPath || d.Severity != compiler.Error {
					t.Errorf("diagnostic %v: want an error in %s", d, compiler.ConfigPath)
				}
				got = append(got, d.String())
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %d diagnostics, want %d:\n%s", len(got), len(tt.want), strings.Join(got, "\n"))
			}
			for i, w := range tt.want {
				if !strings.HasPrefix(got[i], compiler.ConfigPath+":"+strings.Replace(w, ": ", ": error: ", 1)) {
					t.Errorf("diagnostic %d:\n got %s\nwant %s:%s…", i, got[i], compiler.ConfigPath, strings.Replace(w, ": ", ": error: ", 1))
				}
			}
		})
	}
}

// configFiles is a repository whose configuration renames the context
// files, ignores drafts, caps sizes, sets budgets and allows one secret.
func configFiles() testkb.Files {
	return testkb.Files{
		".kb/config.yaml": `context_files: [COPILOT.md]
max_file_size: 1KiB
budgets: {project: 64}
ignore: [drafts/]
secrets:
  allow:
    - path: .kb/examples.md
      rule: AWS access key
`,
		".kb/context.md":       "Project context that is longer than the sixty-four bytes its budget allows.\n",
		"AGENTS.md":            "Not a context file here.\n",
		"COPILOT.md":           "A context file here.\n",
		".kb/drafts/wip.md":    "# Work in progress\n",
		".kb/big.md":           strings.Repeat("big ", 300),
		".kb/examples.md":      "The documented key AKIAZ7XQ3RMP4LWN2VDK is an example.\n",
		".kb/elsewhere.md":     "A key AKIAZ7XQ3RMP4LWN2VDK in another file.\n",
		".kb/topics/normal.md": "# Normal\n\nText.\n",
	}
}

func TestBuildFollowsConfig(t *testing.T) {
	dir := t.TempDir()
	res, err := compiler.Build(context.Background(), configFiles(), compiler.BuildOptions{Out: dir, BuiltAt: testkb.BuiltAt, KeepGoing: true})
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, d := range res.Manifest.Documents {
		paths = append(paths, d.Path)
	}
	want := []string{".kb/context.md", ".kb/examples.md", ".kb/topics/normal.md", "COPILOT.md"}
	if !slices.Equal(paths, want) {
		t.Errorf("documents %v, want %v", paths, want)
	}
	var diags []string
	for _, d := range res.Diagnostics {
		diags = append(diags, d.String())
	}
	all := strings.Join(diags, "\n")
	for _, w := range []string{
		".kb/big.md:1:1: warning: file is over the 1 KiB size cap", // warnings: the build keeps going
		".kb/elsewhere.md:1:7: warning: possible AWS access key",
		"over its 64 bytes budget",
	} {
		if !strings.Contains(all, w) {
			t.Errorf("no diagnostic %q in:\n%s", w, all)
		}
	}
	if strings.Contains(all, "examples.md") {
		t.Errorf("the allowed secret is reported:\n%s", all)
	}
	m := res.Manifest
	if m.Config.Hash == "" || m.Config.Budgets != (artifact.Budgets{Global: 3 << 10, Project: 64, Directory: 7 << 10, Total: 20 << 10}) {
		t.Errorf("manifest config %+v", m.Config)
	}

	// A flag (an option set by the caller) wins over the file.
	res, err = compiler.Build(context.Background(), configFiles(), compiler.BuildOptions{Out: t.TempDir(), BuiltAt: testkb.BuiltAt, KeepGoing: true,
		Options: compiler.Options{ContextFiles: []string{"AGENTS.md"}, MaxFileSize: 1 << 20}})
	if err != nil {
		t.Fatal(err)
	}
	paths = paths[:0]
	for _, d := range res.Manifest.Documents {
		paths = append(paths, d.Path)
	}
	if !slices.Contains(paths, "AGENTS.md") || slices.Contains(paths, "COPILOT.md") || !slices.Contains(paths, ".kb/big.md") {
		t.Errorf("with options set, documents %v", paths)
	}
}

func TestConfigChangeRebuilds(t *testing.T) {
	dir := t.TempDir()
	files := configFiles()
	opts := compiler.BuildOptions{Out: dir, BuiltAt: testkb.BuiltAt, KeepGoing: true}
	if _, err := compiler.Build(context.Background(), files, opts); err != nil {
		t.Fatal(err)
	}
	res, err := compiler.Build(context.Background(), files, opts)
	if err != nil || !res.Incremental {
		t.Fatalf("unchanged: incremental %v, %v", res.Incremental, err)
	}
	files[".kb/config.yaml"] = strings.Replace(files[".kb/config.yaml"], "ignore: [drafts/]", "ignore: []", 1)
	res, err = compiler.Build(context.Background(), files, opts)
	if err != nil {
		t.Fatal(err)
	}
	if res.Incremental || !strings.Contains(res.FullReason, compiler.ConfigPath) {
		t.Errorf("after a configuration change: incremental %v, reason %q", res.Incremental, res.FullReason)
	}
	if !slices.ContainsFunc(res.Manifest.Documents, func(d artifact.Document) bool { return d.Path == ".kb/drafts/wip.md" }) {
		t.Error("the draft no longer ignored is not built")
	}
}

func TestConfigErrorFailsBuild(t *testing.T) {
	dir := t.TempDir()
	files := testkb.Files{".kb/config.yaml": "ignore: drafts/\n", ".kb/a.md": "# A\n"}
	res, err := compiler.Build(context.Background(), files, compiler.BuildOptions{Out: dir, BuiltAt: testkb.BuiltAt})
	if err != compiler.ErrInvalid || res == nil || res.Diagnostics.Errors() != 1 || res.Diagnostics[0].Path != compiler.ConfigPath {
		t.Fatalf("build with a bad configuration: %v, %+v", err, res)
	}
	if _, err := artifact.Read(dir); err == nil {
		t.Error("an artifact was written")
	}
	checked, err := compiler.Check(context.Background(), files, compiler.CheckOptions{})
	if err != nil || checked.Diagnostics.Errors() != 1 || checked.Diagnostics[0].Line != 1 || checked.Diagnostics[0].Col != 9 {
		t.Errorf("check: %v, %v", checked.Diagnostics, err)
	}
}
