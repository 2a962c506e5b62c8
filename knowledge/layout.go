package knowledge

import "strings"

// Dir is the name of knowledge directories.
const Dir = ".kb"

// ConfigPath is where a project keeps its configuration, relative to the
// repository root. It is read from the same source as the knowledge, so
// that a commit's configuration builds that commit.
const ConfigPath = Dir + "/config.yaml"

// DefaultContextFiles are the agent context files other tools use, picked
// up as context documents of the directory they stand in.
var DefaultContextFiles = []string{"AGENTS.md", "CLAUDE.md", "GEMINI.md"}

// Scope names. A directory scope is named by its slash-separated path from
// the repository root; the root's .kb/ is the project scope, and the
// personal knowledge directory the global scope. A top-level directory that
// happens to be called "global" or "project" is named "./global" or
// "./project".
const (
	ScopeGlobal  = "global"
	ScopeProject = "project"
	// ScopeOrg is the organisation's own knowledge: a published
	// repository marked as an org scope (kbc publish --org-scope), in
	// force when a repository is read from the database, between the
	// global scope and the project scope. No directory is named by it.
	ScopeOrg = "org:"
)

// GlobalPathPrefix starts the path of every global-scope document, which
// lives outside the repository: "global:notes/x.md".
const GlobalPathPrefix = "global:"

// ScopeName returns the scope name of the .kb/ directory (or agent context
// file) found in dir, a slash-separated path relative to the repository
// root ("" or "." for the root).
func ScopeName(dir string) string {
	switch dir {
	case "", ".":
		return ScopeProject
	case ScopeGlobal, ScopeProject, ScopeOrg:
		return "./" + dir
	}
	return dir
}

// ScopeDir is the inverse of ScopeName for repository scopes: the directory
// the scope applies to, "" for the project scope. ok is false for the
// global scope.
func ScopeDir(scope string) (dir string, ok bool) {
	switch scope {
	case ScopeGlobal, ScopeOrg:
		return "", false
	case ScopeProject:
		return "", true
	}
	return strings.TrimPrefix(scope, "./"), true
}

// ScopeDepth orders scopes by precedence: global 0, project 1, then one
// more for every directory level. Deeper scopes win. The org scope is 0
// too, and comes after the global scope by its name.
func ScopeDepth(scope string) int {
	dir, ok := ScopeDir(scope)
	switch {
	case !ok:
		return 0
	case dir == "":
		return 1
	}
	return 2 + strings.Count(dir, "/")
}

// ScopeContains reports whether scope applies to dir, a slash-separated
// path relative to the repository root ("" for the root).
func ScopeContains(scope, dir string) bool {
	sdir, ok := ScopeDir(scope)
	switch {
	case !ok || sdir == "":
		return true
	case dir == sdir:
		return true
	}
	return strings.HasPrefix(dir, sdir+"/")
}
