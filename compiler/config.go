package compiler

import (
	"github.com/kbqdev/kbq/compiler/checks"

	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"regexp/syntax"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/kbqdev/kbq/artifact"
	"github.com/kbqdev/kbq/gitsource"
	"github.com/kbqdev/kbq/internal/reponame"
	"github.com/kbqdev/kbq/internal/suggest"
	"github.com/kbqdev/kbq/internal/units"
	"github.com/kbqdev/kbq/knowledge"
)

// ConfigPath is where a project keeps its configuration, relative to the
// repository root (knowledge.ConfigPath).
const ConfigPath = knowledge.ConfigPath

// maxConfigSize caps the configuration file.
const maxConfigSize = 1 << 20

// Config is a project's configuration. Fields left out of the file are
// zero, and the compiler's defaults (or flags) apply.
type Config struct {
	// Hash is the SHA-256 of the file, in hex; "" when there is none.
	Hash string
	// ContextFiles are the agent context file names picked up outside
	// .kb/; nil when not set, empty when set to none.
	ContextFiles []string
	// MaxFileSize is the size cap of a knowledge file; 0 when not set.
	MaxFileSize int64
	// Budgets are the context budgets; zero fields are not set.
	Budgets artifact.Budgets
	// Ignore are patterns, written as in a root .gitignore, of files the
	// build leaves out.
	Ignore []string
	// Secrets are findings of the secret guard that are not secrets.
	Secrets []SecretAllowance
	// Embeddings, when set, turn on semantic search: kbc build embeds
	// every chunk.
	Embeddings *EmbeddingsConfig
	// LLM, when set, is the chat endpoint kbc compact uses.
	LLM *LLMConfig
	// ForeignKeys are frontmatter keys that belong to another tool (a
	// documentation site's status or icon): kbq neither reads nor checks
	// them.
	ForeignKeys []string
	// MinScore, when set, scales the relevance floors of searches of the
	// artifact (0 keeps every result).
	MinScore *float64
	// Org names published repositories whose knowledge is in force in
	// this one as org scopes, outermost first, when kbq reads with
	// KBQ_DATABASE_URL set.
	Org []string
	// CompactThreshold is the tokens a category of knowledge may hold
	// before kbc check suggests compacting it; 0 when not set (the
	// default), -1 for no warning.
	CompactThreshold int
	// Diagnostics are the problems found in the file.
	Diagnostics Diagnostics

	ignore *gitsource.Ignore
	stamp  artifact.FileStamp // the file as a working tree held it
}

// SecretAllowance allows what the secret guard finds where all of its set
// fields match: in files matching Path, by the rule named Rule, with the
// value Value or a value matching Pattern.
type SecretAllowance struct {
	Path    string // a .gitignore-style pattern
	Rule    string // a rule name, as diagnostics give it: "AWS access key"
	Value   string
	Pattern *regexp.Regexp

	path *gitsource.Ignore
}

// LoadConfig reads and validates the configuration of src; without one it
// returns an empty Config. Only I/O failures are errors: problems with the
// file are its diagnostics.
func LoadConfig(src Source) (*Config, error) {
	f, ok, err := lookup(src, ConfigPath)
	if err != nil || !ok {
		return &Config{}, err
	}
	if !f.Kind.IsFile() {
		return configError(fmt.Sprintf("%s is a %s; make it a regular file", ConfigPath, f.Kind)), nil
	}
	data, err := src.Read(f, maxConfigSize)
	if errors.Is(err, gitsource.ErrTooLarge) {
		return configError(fmt.Sprintf("the configuration is over %s; it holds settings, not knowledge", units.Bytes(maxConfigSize))), nil
	}
	if err != nil {
		return nil, err
	}
	c := ParseConfig(data)
	if f.Mod != 0 {
		c.stamp = artifact.FileStamp{Path: ConfigPath, Size: f.Size, Mod: f.Mod, Blob: gitsource.HashBlob(data)}
	}
	return c, nil
}

// configError is a configuration that could not be read, for msg.
func configError(msg string) *Config {
	return &Config{Diagnostics: Diagnostics{{Path: ConfigPath, Line: 1, Col: 1, Severity: Error, Message: msg}}}
}

// lookup finds the file at p in src, without listing it whole when src can
// look one path up.
func lookup(src Source, p string) (gitsource.File, bool, error) {
	if l, ok := src.(interface {
		Lookup(string) (gitsource.File, bool, error)
	}); ok {
		return l.Lookup(p)
	}
	for f, err := range src.Files() {
		if err != nil {
			return gitsource.File{}, false, err
		}
		if f.Path == p {
			return f, true, nil
		}
	}
	return gitsource.File{}, false, nil
}

// ParseConfig parses and validates the bytes of a configuration file.
func ParseConfig(data []byte) *Config {
	sum := sha256.Sum256(data)
	c := &Config{Hash: hex.EncodeToString(sum[:])}
	p := configParser{c: c}
	if !checkText(data, p.report) {
		return c
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(newSource(data).Data, &doc); err != nil {
		line, msg := yamlErrorLine(err)
		p.report(line, 1, Error, "invalid YAML: "+msg)
		return c
	}
	if len(doc.Content) == 0 {
		return c // empty, or only comments
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		p.errorf(root, "the configuration must be a mapping of settings, not %s", describeNode(root))
		return c
	}
	p.mapping(root, "", configKeys, func(key string, v *yaml.Node) {
		switch key {
		case "context_files":
			c.ContextFiles = p.contextFiles(v)
		case "max_file_size":
			c.MaxFileSize, _ = p.size(v, key)
		case "budgets":
			p.budgets(v)
		case "ignore":
			c.Ignore = p.strings(v, key)
			c.ignore = gitsource.NewIgnore(c.Ignore)
		case "secrets":
			p.mapping(v, "secrets", []string{"allow"}, func(_ string, v *yaml.Node) { p.allowances(v) })
		case "embeddings":
			p.embeddings(v)
		case "llm":
			p.llm(v)
		case "compact_threshold":
			p.compactThreshold(v)
		case "foreign_keys":
			c.ForeignKeys = p.foreignKeys(v)
		case "org":
			c.Org = p.org(v)
		case "min_score":
			c.MinScore = p.minScore(v)
		}
	})
	c.Diagnostics.Sort()
	return c
}

// configKeys are the settings of the top level, in the order documented.
var configKeys = []string{"context_files", "max_file_size", "budgets", "ignore", "secrets", "embeddings", "llm", "compact_threshold", "foreign_keys", "org", "min_score"}

// minScore reads min_score: a number, 0 or more.
func (p configParser) minScore(n *yaml.Node) *float64 {
	var f float64
	if n.Kind != yaml.ScalarNode || (n.ShortTag() != "!!float" && n.ShortTag() != "!!int") || n.Decode(&f) != nil || f < 0 {
		p.errorf(n, "min_score must be a number, 0 or more (1 is the default floors, 0 keeps every result), not %s", describeNode(n))
		return nil
	}
	return &f
}

// org reads org: the names of published repositories, each once.
func (p configParser) org(n *yaml.Node) []string {
	names := p.strings(n, "org")
	for i, name := range names {
		if err := reponame.Check(name); err != nil {
			p.errorf(n.Content[i], "org: %v", err)
		} else if slices.Contains(names[:i], name) {
			p.errorf(n.Content[i], "org: %s is named twice", name)
		}
	}
	return names
}

// foreignKeys reads foreign_keys: names of frontmatter keys, none that a
// kind of kbq's requires.
func (p configParser) foreignKeys(n *yaml.Node) []string {
	keys := p.strings(n, "foreign_keys")
	if n.Kind == yaml.SequenceNode {
		for _, e := range n.Content {
			if kind, required := knowledge.RequiredBy(e.Value); required {
				p.errorf(e, "foreign_keys: %s is kbq's own: a %s needs it", e.Value, kind)
			}
		}
	}
	return keys
}

// Ignored reports whether the configuration leaves the repository file at
// path out of builds.
func (c *Config) Ignored(path string) bool {
	return c != nil && c.ignore != nil && c.ignore.Match(path)
}

type configParser struct {
	c *Config
}

func (p configParser) report(line, col int, sev Severity, msg string) {
	p.c.Diagnostics = append(p.c.Diagnostics, Diagnostic{Path: ConfigPath, Line: line, Col: col, Severity: sev, Message: msg})
}

func (p configParser) errorf(n *yaml.Node, format string, args ...any) {
	p.report(n.Line, n.Column, Error, fmt.Sprintf(format, args...))
}

// mapping calls set for each key of n, which must be one of keys; within
// names the mapping in messages ("" for the top level).
func (p configParser) mapping(n *yaml.Node, within string, keys []string, set func(key string, v *yaml.Node)) {
	if n.Kind != yaml.MappingNode {
		p.errorf(n, "%s must be a mapping of %s, not %s", within, strings.Join(keys, ", "), describeNode(n))
		return
	}
	seen := make(map[string]int) // key → its line
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if line, dup := seen[k.Value]; dup {
			p.errorf(k, "%q is set twice (first on line %d): keep one", k.Value, line)
			continue
		}
		seen[k.Value] = k.Line
		if !slices.Contains(keys, k.Value) {
			where := "setting"
			if within != "" {
				where = "key in " + within
			}
			msg := fmt.Sprintf("unknown %s %q", where, k.Value)
			if s := suggest.Closest(k.Value, keys); s != "" {
				msg += fmt.Sprintf(": did you mean %q?", s)
			} else {
				msg += " (known: " + strings.Join(keys, ", ") + ")"
			}
			p.errorf(k, "%s", msg)
			continue
		}
		set(k.Value, v)
	}
}

// strings reads a list of non-empty strings.
func (p configParser) strings(n *yaml.Node, key string) []string {
	if n.Kind != yaml.SequenceNode {
		p.errorf(n, "%s must be a list of strings, not %s", key, describeNode(n))
		return nil
	}
	out := []string{}
	for _, e := range n.Content {
		if e.Kind != yaml.ScalarNode || e.ShortTag() != "!!str" || strings.TrimSpace(e.Value) == "" {
			p.errorf(e, "%s: each entry must be a non-empty string, not %s", key, describeNode(e))
			continue
		}
		out = append(out, e.Value)
	}
	return out
}

func (p configParser) contextFiles(n *yaml.Node) []string {
	names := p.strings(n, "context_files")
	for i, name := range names {
		if strings.ContainsAny(name, `/\`) || name == "." || name == ".." {
			p.errorf(n.Content[i], "context_files: %q is a path; give file names such as AGENTS.md, found in any directory", name)
		}
	}
	return names
}

// size reads a size: a number of bytes or a string such as 5MiB.
func (p configParser) size(n *yaml.Node, key string) (int64, bool) {
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!str" && n.ShortTag() != "!!int" {
		p.errorf(n, "%s must be a size such as 5MiB or 4096, not %s", key, describeNode(n))
		return 0, false
	}
	v, err := ParseSize(n.Value)
	if err != nil {
		p.errorf(n, "%s: %v", key, err)
		return 0, false
	}
	return v, true
}

func (p configParser) budgets(n *yaml.Node) {
	b := &p.c.Budgets
	p.mapping(n, "budgets", []string{"global", "project", "directory", "total"}, func(key string, v *yaml.Node) {
		size, ok := p.size(v, "budgets."+key)
		if !ok {
			return
		}
		if size > 1<<30 {
			p.errorf(v, "budgets.%s: %s is more than any agent's prompt holds", key, units.Bytes(size))
			return
		}
		switch key {
		case "global":
			b.Global = int(size)
		case "project":
			b.Project = int(size)
		case "directory":
			b.Directory = int(size)
		case "total":
			b.Total = int(size)
		}
	})
}

func (p configParser) allowances(n *yaml.Node) {
	if n.Kind != yaml.SequenceNode {
		p.errorf(n, "secrets.allow must be a list of allowances such as {path: docs/examples/**}, not %s", describeNode(n))
		return
	}
	keys := []string{"path", "rule", "value", "pattern"}
	for _, e := range n.Content {
		var a SecretAllowance
		set, bad := 0, false
		p.mapping(e, "a secrets.allow entry", keys, func(key string, v *yaml.Node) {
			if v.Kind != yaml.ScalarNode || v.ShortTag() == "!!null" || v.Value == "" {
				p.errorf(v, "secrets.allow: %s must be a non-empty string, not %s", key, describeNode(v))
				bad = true
				return
			}
			set++
			switch key {
			case "path":
				a.Path, a.path = v.Value, gitsource.NewIgnore([]string{v.Value})
			case "rule":
				a.Rule = v.Value
				if !knownRule(v.Value) {
					msg := fmt.Sprintf("secrets.allow: unknown rule %q", v.Value)
					if s := suggest.Closest(strings.ToLower(v.Value), checks.SecretRules()); s != "" {
						msg += fmt.Sprintf(": did you mean %q?", s)
					} else {
						msg += " (rules: " + strings.Join(checks.SecretRules(), ", ") + ")"
					}
					p.errorf(v, "%s", msg)
				}
			case "value":
				a.Value = v.Value
			case "pattern":
				re, err := regexp.Compile(v.Value)
				if err != nil {
					msg := err.Error()
					if se, ok := err.(*syntax.Error); ok {
						msg = se.Code.String()
					}
					p.errorf(v, "secrets.allow: pattern %s: %s", strconv.Quote(v.Value), msg)
					bad = true
					return
				}
				a.Pattern = re
			}
		})
		if e.Kind == yaml.MappingNode && set == 0 && !bad {
			p.errorf(e, "secrets.allow: an entry needs at least one of %s", strings.Join(keys, ", "))
			continue
		}
		if set > 0 && !bad {
			p.c.Secrets = append(p.c.Secrets, a)
		}
	}
}

func knownRule(name string) bool {
	return slices.Contains(checks.SecretRules(), strings.ToLower(name))
}

// secretAllowances are the allowances in force in one file; allows is
// their checks.Allowed.
type secretAllowances []SecretAllowance

// secretsAllowedIn returns the allowances that apply to the file at path;
// nil when none do.
func (c *Config) secretsAllowedIn(path string) secretAllowances {
	if c == nil {
		return nil
	}
	var out secretAllowances
	for _, a := range c.Secrets {
		if a.path == nil || a.path.Match(path) {
			out = append(out, a)
		}
	}
	return out
}

// allows reports whether a finding of rule with value secret is allowed.
func (as secretAllowances) allows(rule string, secret []byte) bool {
	for _, a := range as {
		if a.Rule != "" && !strings.EqualFold(a.Rule, rule) {
			continue
		}
		if a.Value != "" && a.Value != string(secret) {
			continue
		}
		if a.Pattern != nil && !a.Pattern.Match(secret) {
			continue
		}
		return true
	}
	return false
}

// ParseSize reads a size: 5MiB, 512KiB, 2MB, 1024 (bytes).
func ParseSize(s string) (int64, error) {
	units := []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"K", 1 << 10}, {"M", 1 << 20}, {"B", 1}}
	num, mult := strings.TrimSpace(s), int64(1)
	for _, u := range units {
		if strings.HasSuffix(strings.ToUpper(num), strings.ToUpper(u.suffix)) {
			num, mult = strings.TrimSpace(num[:len(num)-len(u.suffix)]), u.mult
			break
		}
	}
	n, err := strconv.ParseFloat(num, 64)
	if err != nil || n <= 0 || n*float64(mult) > 1<<50 {
		return 0, fmt.Errorf("%q is not a size such as 5MiB", s)
	}
	return int64(n * float64(mult)), nil
}

// FindSecrets runs the secret guard over text, as the file at path (a
// repository path) with cfg's allowances, and returns what it finds: for
// text about to leave the machine, such as what kbc compact sends.
func FindSecrets(cfg *Config, path string, text []byte) Diagnostics {
	var found Diagnostics
	checks.Secrets(newSource(text), cfg.secretsAllowedIn(path).allows, func(line, col int, sev Severity, msg string) {
		found = append(found, Diagnostic{Path: path, Line: line, Col: col, Severity: sev, Message: msg})
	})
	return found
}
