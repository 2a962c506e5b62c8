package documents

import (
	"fmt"
	"strings"
)

// The agents kbq context can size its output for: the most of a context
// file each reads, as documented. 0 means no limit of its own (kbq's
// budget holds).
var Agents = map[string]struct {
	MaxBytes, MaxLines int
	Doc                string
}{
	// Codex reads AGENTS.md files up to project_doc_max_bytes, 32 KiB by
	// default.
	"codex": {MaxBytes: 32 << 10, Doc: "Codex reads 32 KiB of AGENTS.md (project_doc_max_bytes)"},
	// Claude Code loads the first 200 lines of its MEMORY.md, and at most
	// 25 KB of it.
	"claude": {MaxBytes: 25_000, MaxLines: 200, Doc: "Claude Code loads 200 lines, and 25 KB, of MEMORY.md"},
	// Gemini CLI documents no limit for GEMINI.md: kbq's budget holds.
	"gemini": {Doc: "Gemini CLI documents no limit of GEMINI.md; kbq's total budget holds"},
}

// span is a part of the assembled context and the documents it came from.
type span struct {
	start int
	paths []string // nil for kbq's own text (the knowledge index)
}

// cutContext cuts text to at most maxBytes bytes and, when maxLines is
// above 0, maxLines lines, at a block boundary: before a heading, a list
// item or a paragraph, outside fenced code, never inside a line. What was
// dropped is said in the text itself, with how to read it. It returns the
// text and the paths of the documents cut, in order.
func cutContext(text string, spans []span, maxBytes, maxLines int) (string, []string) {
	// The note takes two lines (a blank one before it) and some bytes: its
	// size depends on what is cut, so leave a generous share and check.
	const noteLines = 2
	fitsText := func(s string) bool {
		return len(s) <= maxBytes && (maxLines <= 0 || strings.Count(s, "\n") <= maxLines)
	}
	if fitsText(text) {
		return text, nil
	}
	for reserve := 512; ; reserve *= 2 {
		cut := lastBoundary(text, func(n int) bool {
			return n+reserve <= maxBytes && (maxLines <= 0 || strings.Count(text[:n], "\n")+noteLines <= maxLines)
		})
		// A block too long for what is left (a context of one long
		// paragraph) is cut inside, at the end of a sentence or else of a
		// word, rather than dropped whole.
		if cut < (maxBytes-reserve)/2 && (maxLines <= 0 || strings.Count(text[:cut], "\n") < maxLines/2) {
			if n := insideCut(text, cut, maxBytes-reserve, maxLines-noteLines); n > cut {
				cut = n
			}
		}
		var cutPaths []string
		index := false
		for i, s := range spans {
			end := len(text)
			if i+1 < len(spans) {
				end = spans[i+1].start
			}
			if end <= cut {
				continue
			}
			if s.paths == nil {
				index = true
			}
			for _, p := range s.paths {
				if !contains(cutPaths, p) {
					cutPaths = append(cutPaths, p)
				}
			}
		}
		note := cutNote(cutPaths, index)
		out := strings.TrimRight(text[:cut], "\n") + "\n\n" + note
		if fitsText(out) || cut == 0 {
			if !fitsText(out) {
				out = truncateUTF8(note, maxBytes)
			}
			return out, cutPaths
		}
		if reserve > maxBytes {
			return truncateUTF8(note, maxBytes), cutPaths
		}
	}
}

// insideCut returns where to cut text inside the block at from, so that
// text[:n] is at most limit bytes and, when lines > 0, that many lines:
// after the last sentence that fits, else the last word; from when the
// block is fenced code or nothing fits.
func insideCut(text string, from, limit, lines int) int {
	if from >= len(text) || limit <= from {
		return from
	}
	region := text[from:min(limit, len(text))]
	if lines > 0 {
		budget := lines - strings.Count(text[:from], "\n")
		for i := 0; i < len(region); i++ {
			if region[i] == '\n' {
				if budget--; budget <= 0 {
					region = region[:i]
					break
				}
			}
		}
	}
	if t := strings.TrimLeft(region, " \n"); strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") || strings.Contains(region, "\n```") {
		return from
	}
	best := -1
	for i := 0; i+1 < len(region); i++ {
		if strings.ContainsRune(".!?", rune(region[i])) && (region[i+1] == ' ' || region[i+1] == '\n') {
			best = i + 1
		}
	}
	if best < 0 {
		best = strings.LastIndexAny(region, " \n")
	}
	if best <= 0 {
		return from
	}
	return from + best
}

// cutNote says in the context what was left out of it and how to read it.
func cutNote(paths []string, index bool) string {
	var what []string
	for _, p := range paths {
		what = append(what, "`kbq get "+p+"`")
	}
	var b strings.Builder
	b.WriteString("*(kbq: the context was cut here to fit")
	if len(what) > 0 {
		fmt.Fprintf(&b, "; the rest of %s is left out: read it with %s", plural(len(what), "this document", "these documents"), strings.Join(what, ", "))
	}
	if index {
		b.WriteString("; the knowledge index is left out: `kbq search` finds what it listed")
	}
	b.WriteString(")*\n")
	return b.String()
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// lastBoundary returns the offset of the last block start in text at which
// ok holds for the text before it, 0 if none: the start of a line outside
// fenced code that is a heading or list item, or that follows a blank line.
func lastBoundary(text string, ok func(n int) bool) int {
	var bounds []int
	fence := ""
	prevBlank := false
	for off := 0; off < len(text); {
		end := strings.IndexByte(text[off:], '\n')
		if end < 0 {
			end = len(text) - off
		}
		line := text[off : off+end]
		trimmed := strings.TrimLeft(line, " ")
		indent := len(line) - len(trimmed)
		if fence == "" && off > 0 && (prevBlank && strings.TrimSpace(line) != "" || indent < 4 && (atxLevel(trimmed) > 0 || isListItem(trimmed))) {
			if !ok(off) {
				break
			}
			bounds = append(bounds, off)
		}
		switch {
		case fence != "":
			if indent < 4 && strings.HasPrefix(trimmed, fence) && strings.Trim(trimmed, fence[:1]) == "" {
				fence = ""
			}
		case indent < 4 && (strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~")):
			fence = trimmed[:3]
		}
		prevBlank = strings.TrimSpace(line) == ""
		off += end + 1
	}
	// A heading is not left without what follows it: cut before it.
	for len(bounds) > 1 {
		last := bounds[len(bounds)-1]
		before := strings.TrimRight(text[:last], "\n ")
		lineStart := strings.LastIndexByte(before, '\n') + 1
		if atxLevel(strings.TrimLeft(before[lineStart:], " ")) == 0 {
			break
		}
		bounds = bounds[:len(bounds)-1]
	}
	if len(bounds) == 0 {
		return 0
	}
	return bounds[len(bounds)-1]
}

// isListItem reports whether a line starts a list item: "- ", "* ", "+ "
// or "1. ".
func isListItem(line string) bool {
	if len(line) >= 2 && strings.ContainsRune("-*+", rune(line[0])) && line[1] == ' ' {
		return true
	}
	i := 0
	for i < len(line) && i < 9 && line[i] >= '0' && line[i] <= '9' {
		i++
	}
	return i > 0 && i+1 < len(line) && (line[i] == '.' || line[i] == ')') && line[i+1] == ' '
}
