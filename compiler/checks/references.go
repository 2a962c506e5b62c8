package checks

import (
	"bytes"
	"fmt"
	"iter"
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

// An inline code span that reads as a repository path: words joined by
// slashes, or a directory's name and a slash.
var codePath = regexp.MustCompile("`([A-Za-z0-9_][A-Za-z0-9_.-]*(?:(?:/[A-Za-z0-9_.-]+)+/?|/))`")

// linkTargets yields the bounds of each markdown link's target in line,
// [text](target "title"), as the regular expression
// \]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\) finds them in turn with its
// first group (FuzzLinkTargets holds the two to the same answers); the
// expression was two-fifths of the reference check on the PowerShell
// docs' thousands of links.
func linkTargets(line []byte) iter.Seq[[2]int] {
	return func(yield func([2]int) bool) {
		for i := 0; ; {
			j := bytes.Index(line[i:], []byte("]("))
			if j < 0 {
				return
			}
			at := i + j
			start, end, next, ok := linkTargetAt(line, at+2)
			if !ok {
				i = at + 1
				continue
			}
			if !yield([2]int{start, end}) {
				return
			}
			i = next
		}
	}
}

// linkTargetAt matches what follows "](" at line[p:], as linkTarget does:
// spaces, the target (in angle brackets or not), an optional quoted
// title, spaces and ")". It returns the target's bounds and the end of
// the match.
func linkTargetAt(line []byte, p int) (start, end, next int, ok bool) {
	space := func(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r' }
	spaces := func(i int) int {
		for i < len(line) && space(line[i]) {
			i++
		}
		return i
	}
	p = spaces(p)
	// The regular expression prefers the angle bracket, then tries
	// without it: a target may start with '<'.
	for _, angle := range [2]bool{true, false} {
		i := p
		if angle {
			if i >= len(line) || line[i] != '<' {
				continue
			}
			i++
		}
		start = i
		for i < len(line) && line[i] != ')' && line[i] != '>' && !space(line[i]) {
			i++
		}
		if i == start {
			continue
		}
		end = i
		if i < len(line) && line[i] == '>' {
			i++
		}
		// A title, then the closing parenthesis; else the parenthesis.
		if t := spaces(i); t > i && t < len(line) && line[t] == '"' {
			if q := bytes.IndexByte(line[t+1:], '"'); q >= 0 {
				if c := spaces(t + 1 + q + 1); c < len(line) && line[c] == ')' {
					return start, end, c + 1, true
				}
			}
		}
		if c := spaces(i); c < len(line) && line[c] == ')' {
			return start, end, c + 1, true
		}
	}
	return 0, 0, 0, false
}

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
			for m := range linkTargets(line) {
				target := string(line[m[0]:m[1]])
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
				fn(PathRef{Off: start + m[0], Name: target, How: "the link", Candidates: []string{resolved}})
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
