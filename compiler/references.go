package compiler

import (
	"bytes"
	"fmt"
	"path"
	"regexp"
	"strings"

	"github.com/kbqdev/kbq/artifact"
)

// repoPaths is every file and directory of a build's source, for checking
// the repository paths knowledge names.
// Names are compared without case: documentation sites and two of the
// three common file systems find a path whose case differs.
type repoPaths struct {
	names map[string]bool // files and directories, lowercased
}

func newRepoPaths() *repoPaths {
	return &repoPaths{names: map[string]bool{"": true}}
}

func (p *repoPaths) add(file string) {
	p.names[strings.ToLower(file)] = true
	for d := path.Dir(file); d != "." && !p.names[strings.ToLower(d)]; d = path.Dir(d) {
		p.names[strings.ToLower(d)] = true
	}
}

func (p *repoPaths) exists(name string) bool {
	return p.names[strings.ToLower(strings.TrimSuffix(name, "/"))]
}

var (
	// A markdown link's target: [text](target "title").
	linkTarget = regexp.MustCompile(`\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)`)
	// An inline code span that reads as a repository path: words joined
	// by slashes.
	codePath = regexp.MustCompile("`([A-Za-z0-9_][A-Za-z0-9_.-]*(?:/[A-Za-z0-9_.-]+)+/?)`")
)

// checkReferences warns about the repository paths a document names that
// the source does not hold: relative markdown links to files (a target
// with an extension, outside fenced code), and inline code spans that are
// paths whose first directory exists. Links to sites (with a scheme, or
// from the site's root) and anchors are not paths of the repository.
func checkReferences(d *document, paths *repoPaths, report reporter) {
	if paths == nil || d.src == nil || strings.HasPrefix(d.Path, artifact.GlobalPathPrefix) {
		return
	}
	text := d.src.text
	dir := path.Dir(d.Path)
	seen := make(map[string]bool)
	warn := func(off int, name, how string) {
		if seen[name] {
			return
		}
		seen[name] = true
		line, col := d.src.position(off)
		report(line, col, Warning, fmt.Sprintf("dead reference: %s names %s, which is not in the repository at this source (fix the path, or remove the reference)", how, name))
	}
	forEachProseLine(text, d.body, func(start int, line []byte) {
		// Most lines link nowhere and name no path: no regexp for them.
		if bytes.Contains(line, []byte("](")) {
			for _, m := range linkTarget.FindAllSubmatchIndex(line, -1) {
				target := string(line[m[2]:m[3]])
				if strings.Contains(target, ":") || strings.HasPrefix(target, "#") || strings.HasPrefix(target, "/") {
					continue
				}
				target, _, _ = strings.Cut(target, "#")
				target, _, _ = strings.Cut(target, "?")
				if target == "" || !strings.Contains(path.Base(target), ".") {
					continue
				}
				resolved := path.Clean(path.Join(dir, target))
				if resolved == ".." || strings.HasPrefix(resolved, "../") || paths.exists(resolved) {
					continue
				}
				warn(start+m[2], target, "the link")
			}
		}
		if bytes.IndexByte(line, '`') >= 0 && bytes.IndexByte(line, '/') >= 0 {
			for _, m := range codePath.FindAllSubmatchIndex(line, -1) {
				name := strings.TrimSuffix(string(line[m[2]:m[3]]), "/")
				first, _, _ := strings.Cut(name, "/")
				if !paths.exists(first) || paths.exists(name) || paths.exists(path.Join(dir, name)) {
					continue
				}
				warn(start+m[2], name, "the code span")
			}
		}
	})
}

// forEachProseLine calls fn with each line of text from body on that is
// outside fenced code, and its offset.
func forEachProseLine(text []byte, body int, fn func(start int, line []byte)) {
	fence := ""
	for off := body; off < len(text); {
		end := bytes.IndexByte(text[off:], '\n')
		if end < 0 {
			end = len(text) - off
		}
		line := text[off : off+end]
		trimmed := bytes.TrimLeft(line, " ")
		switch {
		case fence != "":
			if bytes.HasPrefix(trimmed, []byte(fence)) && len(bytes.Trim(trimmed, fence[:1]+" \r")) == 0 {
				fence = ""
			}
		case bytes.HasPrefix(trimmed, []byte("```")) || bytes.HasPrefix(trimmed, []byte("~~~")):
			fence = string(trimmed[:3])
		default:
			fn(off, line)
		}
		off += end + 1
	}
}
