package checks

import (
	"bytes"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/kbqdev/kbq/knowledge"
)

// RepoPaths is every file and directory of a build's source, for checking
// the repository paths knowledge names.
// Names are compared without case: documentation sites and two of the
// three common file systems find a path whose case differs.
//
// It holds each name's 64-bit hash, not the name: at 92,000 files the
// names and their lowercase copies were 8.6 MB held through a build. Two
// names of a source sharing a hash, which makes a reference to the one
// pass for the other, is a chance of about one in 10^9 at a million
// names.
type RepoPaths struct {
	names map[uint64]struct{} // files and directories, lowercased
}

// NewRepoPaths returns an empty set, but for the root.
func NewRepoPaths() *RepoPaths {
	return &RepoPaths{names: map[uint64]struct{}{foldHash("", nil): {}}}
}

// Add adds a file and the directories it is in.
func (p *RepoPaths) Add(file string) {
	p.names[foldHash(file, func(dir uint64) { p.names[dir] = struct{}{} })] = struct{}{}
}

// Exists reports whether name is a file or directory added.
func (p *RepoPaths) Exists(name string) bool {
	_, ok := p.names[foldHash(strings.TrimSuffix(name, "/"), nil)]
	return ok
}

// foldHash is the FNV-1a hash of name as strings.ToLower writes it; dir,
// when set, is called with the hash of each directory name is in, as
// path.Dir gives them, each a prefix of name up to a slash.
func foldHash(name string, dir func(uint64)) uint64 {
	const offset, prime = 14695981039346656037, 1099511628211
	h := uint64(offset)
	var buf [utf8.UTFMax]byte
	for i := 0; i < len(name); {
		c := name[i]
		if c < utf8.RuneSelf {
			if c == '/' && dir != nil && i > 0 {
				dir(h)
			}
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			h = (h ^ uint64(c)) * prime
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(name[i:])
		for _, b := range utf8.AppendRune(buf[:0], unicode.ToLower(r)) {
			h = (h ^ uint64(b)) * prime
		}
		i += n
	}
	return h
}

var (
	// A markdown link's target: [text](target "title").
	linkTarget = regexp.MustCompile(`\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)`)
	// An inline code span that reads as a repository path: words joined
	// by slashes, or a directory's name and a slash.
	codePath = regexp.MustCompile("`([A-Za-z0-9_][A-Za-z0-9_.-]*(?:(?:/[A-Za-z0-9_.-]+)+/?|/))`")
)

// References warns about the repository paths a document names that
// the source does not hold: relative markdown links to files (a target
// with an extension, outside fenced code), and inline code spans that are
// paths whose first directory exists. Links to sites (with a scheme, or
// from the site's root) and anchors are not paths of the repository.
// The document is at docPath, its body from byte body of src.
func References(docPath string, src *Text, body int, paths *RepoPaths, report Report) {
	if paths == nil || src == nil || strings.HasPrefix(docPath, knowledge.GlobalPathPrefix) {
		return
	}
	seen := make(map[string]bool)
	ScanReferences(src.Data, body, docPath, func(ref PathRef) {
		if seen[ref.Name] {
			return
		}
		switch ref.How {
		case "the link":
			if paths.Exists(ref.Candidates[0]) {
				return
			}
		default:
			first, _, _ := strings.Cut(ref.Candidates[0], "/")
			if !paths.Exists(first) || slices.ContainsFunc(ref.Candidates, paths.Exists) {
				return
			}
		}
		seen[ref.Name] = true
		line, col := src.Position(ref.Off)
		report(line, col, Warning, fmt.Sprintf("dead reference: %s names %s, which is not in the repository at this source (fix the path, or remove the reference)", ref.How, ref.Name))
	})
}

// A PathRef is a repository path a document names.
type PathRef struct {
	Off        int      // byte offset in the document's text
	Name       string   // as written
	How        string   // "the link" or "the code span"
	Candidates []string // the repository paths it may mean, cleaned
}

// ScanReferences calls fn with every repository path the prose of a
// document at docPath names: relative markdown links to files (a target
// with an extension), and inline code spans that read as paths, which may
// be from the repository's root or from the document's directory.
func ScanReferences(text []byte, body int, docPath string, fn func(PathRef)) {
	dir := path.Dir(docPath)
	forEachProseLine(text, body, func(start int, line []byte) {
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
				if resolved == ".." || strings.HasPrefix(resolved, "../") {
					continue
				}
				fn(PathRef{Off: start + m[2], Name: target, How: "the link", Candidates: []string{resolved}})
			}
		}
		if bytes.IndexByte(line, '`') >= 0 && bytes.IndexByte(line, '/') >= 0 {
			for _, m := range codePath.FindAllSubmatchIndex(line, -1) {
				if inAnotherRepository(line, m[0], m[1]) {
					continue // "`agent_docs/x.md` in that repo" is not this repository's
				}
				name := string(line[m[2]:m[3]])
				candidates := []string{path.Clean(name)}
				if local := path.Clean(path.Join(dir, name)); local != candidates[0] && !strings.HasPrefix(local, "../") {
					candidates = append(candidates, local)
				}
				fn(PathRef{Off: start + m[2], Name: name, How: "the code span", Candidates: candidates})
			}
		}
	})
}

// otherRepository is what a sentence says to place a path in another
// repository: "in that repo", "from the api repository", "the other
// project's", "repo X".
var otherRepository = regexp.MustCompile(`(?i)\b(?:that|the other|another|other|their|upstream|[a-z0-9_.-]+/[a-z0-9_.-]+)(?:'s)? (?:repo|repository|repositories|repos|project)\b|\b(?:in|from|of|at|the) (?:the )?[a-z0-9_./-]+ (?:repo|repository)\b|\b(?:repo|repository) [a-z0-9_./-]+/[a-z0-9_.-]+`)

// inAnotherRepository reports whether the sentence of line holding
// [start,end) places it in another repository.
func inAnotherRepository(line []byte, start, end int) bool {
	from := bytes.LastIndexAny(line[:start], ".;!?") + 1
	to := len(line)
	if i := bytes.IndexAny(line[end:], ".;!?"); i >= 0 {
		for j := end + i; j < len(line); j++ { // a dot inside a path or name is no sentence's end
			if bytes.ContainsRune([]byte(".;!?"), rune(line[j])) && (j+1 == len(line) || line[j+1] == ' ') {
				to = j
				break
			}
		}
	}
	sentence := line[from:to]
	if !otherRepository.Match(sentence) {
		return false
	}
	return !thisRepository.Match(sentence)
}

var thisRepository = regexp.MustCompile(`(?i)\b(?:this|our) (?:repo|repository|project)\b`)

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
			if bytes.HasPrefix(trimmed, []byte(fence)) && len(bytes.Trim(trimmed, fence[:1]+" \t\r")) == 0 {
				fence = ""
			}
		case bytes.HasPrefix(trimmed, []byte("```")) || bytes.HasPrefix(trimmed, []byte("~~~")):
			n := len(trimmed) - len(bytes.TrimLeft(trimmed, string(trimmed[:1])))
			fence = string(trimmed[:n]) // closed only by a run as long
		default:
			fn(off, line)
		}
		off += end + 1
	}
}
