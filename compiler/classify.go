package compiler

import (
	"path"
	"strings"

	"github.com/kbqdev/kbq/artifact"
)

// KBDir is the name of knowledge directories.
const KBDir = ".kb"

// DefaultContextFiles are the agent context files other tools use, picked up
// as context documents of the directory they stand in.
var DefaultContextFiles = []string{"AGENTS.md", "CLAUDE.md", "GEMINI.md"}

// location is where a knowledge file belongs.
type location struct {
	scope string
	kind  string
	topic string
	// warning, when set, is a problem with the file's place in the tree.
	warning string
}

// misplacedKindDirs are near misses of the kind directories.
var misplacedKindDirs = map[string]string{
	"memory": "memories", "memorys": "memories", "mem": "memories",
	"article": "articles", "attachment": "attachments", "attachements": "attachments",
}

// classify returns where the repository file p (slash-separated) belongs,
// or ok=false when it is not knowledge. contextFiles are the agent context
// file names to pick up outside .kb/ directories.
func classify(p string, contextFiles []string) (loc location, ok bool) {
	dir, inner, found := cutKB(p)
	if !found {
		name := path.Base(p)
		for _, cf := range contextFiles {
			if name == cf {
				d := path.Dir(p)
				return location{scope: artifact.ScopeName(d), kind: artifact.KindContext, topic: strings.TrimSuffix(name, path.Ext(name))}, true
			}
		}
		return location{}, false
	}
	loc, ok = classifyInner(inner)
	loc.scope = artifact.ScopeName(dir)
	return loc, ok
}

// classifyGlobal classifies a file of the global knowledge directory, which
// is laid out like a .kb/ directory.
func classifyGlobal(inner string) (location, bool) {
	loc, ok := classifyInner(inner)
	loc.scope = artifact.ScopeGlobal
	return loc, ok
}

// cutKB splits p at its first .kb/ directory.
func cutKB(p string) (dir, inner string, found bool) {
	if rest, ok := strings.CutPrefix(p, KBDir+"/"); ok {
		return "", rest, true
	}
	i := strings.Index(p, "/"+KBDir+"/")
	if i < 0 {
		return "", "", false
	}
	return p[:i], p[i+len(KBDir)+2:], true
}

// classifyInner classifies a path inside a .kb/ directory.
func classifyInner(inner string) (location, bool) {
	parts := strings.Split(inner, "/")
	if parts[0] == "attachments" && len(parts) > 1 {
		return location{kind: artifact.KindAttachment, topic: inner}, true
	}
	if !isKnowledgeText(inner) {
		return location{}, false
	}
	topic := strings.TrimSuffix(inner, path.Ext(inner))
	loc := location{kind: artifact.KindTopic, topic: topic}
	if !isMarkdown(inner) {
		// Plain text and HTML are topics, wherever they are.
		if len(parts) == 2 && (parts[0] == "memories" || parts[0] == "articles") || inner == "context"+path.Ext(inner) {
			loc.warning = inner + " is not markdown: memories, articles and context are .md files, so this file is indexed as a topic"
		}
		return loc, true
	}
	switch {
	case inner == "context.md":
		loc.kind = artifact.KindContext
	case len(parts) == 2 && parts[0] == "memories":
		loc.kind = artifact.KindMemory
	case len(parts) == 2 && parts[0] == "articles":
		loc.kind = artifact.KindArticle
	case len(parts) > 2 && (parts[0] == "memories" || parts[0] == "articles"):
		loc.warning = "unknown kind directory " + path.Dir(inner) + "/: " + parts[0] + " must sit directly in " + parts[0] + "/, so this file is indexed as a topic"
	case len(parts) > 1 && misplacedKindDirs[parts[0]] != "":
		loc.warning = "unknown kind directory " + parts[0] + "/: did you mean " + misplacedKindDirs[parts[0]] + "/? This file is indexed as a topic"
	}
	return loc, true
}

func isMarkdown(p string) bool {
	return strings.EqualFold(path.Ext(p), ".md")
}

// isKnowledgeText reports whether a file inside .kb/ is knowledge: markdown,
// plain text (.txt) or HTML (.html, .htm).
func isKnowledgeText(p string) bool {
	switch strings.ToLower(path.Ext(p)) {
	case ".md", ".txt", ".html", ".htm":
		return true
	}
	return false
}

// textFormat is how a knowledge file is read: "md", "txt" or "html".
func textFormat(p string) string {
	switch strings.ToLower(path.Ext(p)) {
	case ".txt":
		return "txt"
	case ".html", ".htm":
		return "html"
	}
	return "md"
}
