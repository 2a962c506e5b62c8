package knowledge

import (
	"path"
	"strings"
)

// Location is where a knowledge file belongs.
type Location struct {
	Scope string
	Kind  string
	Topic string
	// Warning, when set, is a problem with the file's place in the tree.
	Warning string
}

// misplacedDirs are near misses of the kinds' directories.
var misplacedDirs = map[string]string{
	"memory": "memories", "memorys": "memories", "mem": "memories",
	"article": "articles", "attachment": "attachments", "attachements": "attachments",
}

// Classify returns where the repository file p (slash-separated) belongs,
// or ok=false when it is not knowledge. contextFiles are the agent context
// file names to pick up outside .kb/ directories.
func Classify(p string, contextFiles []string) (loc Location, ok bool) {
	dir, inner, found := CutKB(p)
	if !found {
		name := path.Base(p)
		for _, cf := range contextFiles {
			if name == cf {
				d := path.Dir(p)
				return Location{Scope: ScopeName(d), Kind: KindContext, Topic: strings.TrimSuffix(name, path.Ext(name))}, true
			}
		}
		return Location{}, false
	}
	loc, ok = ClassifyInner(inner)
	loc.Scope = ScopeName(dir)
	return loc, ok
}

// ClassifyGlobal classifies a file of the global knowledge directory,
// which is laid out like a .kb/ directory.
func ClassifyGlobal(inner string) (Location, bool) {
	loc, ok := ClassifyInner(inner)
	loc.Scope = ScopeGlobal
	return loc, ok
}

// CutKB splits p at its first .kb/ directory: dir is where the .kb/
// directory stands, inner the path inside it.
func CutKB(p string) (dir, inner string, found bool) {
	if rest, ok := strings.CutPrefix(p, Dir+"/"); ok {
		return "", rest, true
	}
	i := strings.Index(p, "/"+Dir+"/")
	if i < 0 {
		return "", "", false
	}
	return p[:i], p[i+len(Dir)+2:], true
}

// ClassifyInner classifies a path inside a .kb/ directory; the Location
// has no scope.
func ClassifyInner(inner string) (Location, bool) {
	parts := strings.Split(inner, "/")
	for _, k := range kinds {
		if k.AnyFile && len(parts) > 1 && parts[0] == k.Dir {
			return Location{Kind: k.Name, Topic: inner}, true
		}
	}
	if !IsKnowledgeText(inner) {
		return Location{}, false
	}
	topic := strings.TrimSuffix(inner, path.Ext(inner))
	loc := Location{Kind: KindTopic, Topic: topic}
	if !IsMarkdown(inner) {
		// Plain text and HTML are topics, wherever they are.
		if len(parts) == 2 && isKindDir(parts[0]) || isKindFile(topic+".md") {
			loc.Warning = inner + " is not markdown: memories, articles and context are .md files, so this file is indexed as a topic"
		}
		return loc, true
	}
	for _, k := range kinds {
		switch {
		case k.AnyFile:
		case k.File != "" && inner == k.File:
			loc.Kind = k.Name
			return loc, true
		case k.Dir != "" && parts[0] == k.Dir && len(parts) == 2:
			loc.Kind = k.Name
			return loc, true
		case k.Dir != "" && parts[0] == k.Dir && len(parts) > 2:
			loc.Warning = "unknown kind directory " + path.Dir(inner) + "/: " + parts[0] + " must sit directly in " + parts[0] + "/, so this file is indexed as a topic"
			return loc, true
		}
	}
	if len(parts) > 1 && misplacedDirs[parts[0]] != "" {
		loc.Warning = "unknown kind directory " + parts[0] + "/: did you mean " + misplacedDirs[parts[0]] + "/? This file is indexed as a topic"
	}
	return loc, true
}

// isKindDir reports whether dir is the directory of a kind of markdown
// documents.
func isKindDir(dir string) bool {
	for _, k := range kinds {
		if k.Dir == dir && !k.AnyFile {
			return true
		}
	}
	return false
}

func isKindFile(name string) bool {
	for _, k := range kinds {
		if k.File != "" && k.File == name {
			return true
		}
	}
	return false
}

// KindDir returns the directory of .kb/ that holds kind's documents, ""
// for kinds that have none.
func KindDir(kind string) string {
	k, _ := LookupKind(kind)
	return k.Dir
}

// IsKindDir reports whether dir, the first element of a path inside .kb/,
// is a kind's directory rather than a topic's folder.
func IsKindDir(dir string) bool {
	for _, k := range kinds {
		if k.Dir != "" && k.Dir == dir {
			return true
		}
	}
	return false
}

// IsMarkdown reports whether a file name is a markdown document's.
func IsMarkdown(p string) bool {
	return strings.EqualFold(path.Ext(p), ".md")
}

// IsKnowledgeText reports whether a file inside .kb/ is knowledge:
// markdown, plain text (.txt) or HTML (.html, .htm).
func IsKnowledgeText(p string) bool {
	switch strings.ToLower(path.Ext(p)) {
	case ".md", ".txt", ".html", ".htm":
		return true
	}
	return false
}

// TextFormat is how a knowledge file is read: "md", "txt" or "html".
func TextFormat(p string) string {
	switch strings.ToLower(path.Ext(p)) {
	case ".txt":
		return "txt"
	case ".html", ".htm":
		return "html"
	}
	return "md"
}
