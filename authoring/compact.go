package authoring

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// ErrCompact means a compaction cannot go on; the message says why.
var ErrCompact = errors.New("cannot compact")

// A CompactSource is one document a compaction replaces.
type CompactSource struct {
	Path    string // its repository path, as the summary cites it
	Ref     string // what supersedes: names: memory:ID or a topic key
	Updated string // when it last changed (RFC 3339), "" when unknown
	Text    string // the file as it is, frontmatter included
}

// compactInstructions tell the model what a summary must be.
const compactInstructions = `You merge a team's knowledge notes into one markdown document that replaces them in the team's knowledge base. People review it in a pull request before it is merged.

Rules:
- Keep every fact, decision, instruction, command, number and name that the notes state. Merge what repeats. Leave nothing out because it seems minor.
- The notes come oldest first, each with the date it last changed. When notes disagree, keep what the newest says, and say in a short clause what it replaced.
- Write plain markdown: one "# " title line first, then sections with "## " headings by subject. No frontmatter, no preamble, no closing remarks.
- After each statement cite the notes it comes from, as [path] with the exact path given for the note, such as [.kb/memories/001-deploy.md]. Cite every note at least once.
- Do not invent anything the notes do not say.`

// CompactPrompt returns the instructions and the text a model is given to
// merge sources, oldest first.
func CompactPrompt(sources []CompactSource) (system, user string) {
	sorted := slices.Clone(sources)
	slices.SortStableFunc(sorted, func(a, b CompactSource) int { return strings.Compare(a.Updated, b.Updated) })
	var b strings.Builder
	fmt.Fprintf(&b, "Merge these %d notes.\n", len(sorted))
	for _, s := range sorted {
		when := "date unknown"
		if len(s.Updated) >= len("2006-01-02") {
			when = "last changed " + s.Updated[:len("2006-01-02")]
		}
		fmt.Fprintf(&b, "\n===== NOTE %s (%s) =====\n%s\n", s.Path, when, strings.TrimRight(s.Text, "\n"))
	}
	b.WriteString("\n===== END OF NOTES =====\n")
	return compactInstructions, b.String()
}

// CompactSummary checks a model's reply against the sources and returns
// the summary topic's file: frontmatter with its title, what it
// supersedes and the paths of its sources, then the reply. A reply that
// does not cite every source is refused: the summary would retire
// knowledge it may have dropped.
func CompactSummary(reply string, sources []CompactSource, what string, now time.Time) (string, error) {
	body := unwrapReply(reply)
	if strings.TrimSpace(body) == "" {
		return "", fmt.Errorf("%w: the reply is empty", ErrCompact)
	}
	var dropped []string
	for _, s := range sources {
		if !strings.Contains(body, s.Path) {
			dropped = append(dropped, s.Path)
		}
	}
	if len(dropped) > 0 {
		return "", fmt.Errorf("%w: the reply cites %d of the %d sources, and may have dropped what the others say: %s; nothing was written (run kbc compact again, or compact fewer documents at once)",
			ErrCompact, len(sources)-len(dropped), len(sources), strings.Join(dropped, ", "))
	}
	title := "Summary of " + what
	if first, _, _ := strings.Cut(body, "\n"); strings.HasPrefix(first, "# ") {
		title = strings.TrimSpace(strings.TrimPrefix(first, "# "))
	}
	fm := struct {
		Title       string   `yaml:"title"`
		Description string   `yaml:"description"`
		Supersedes  []string `yaml:"supersedes,flow"`
		Sources     []string `yaml:"sources"`
	}{Title: title, Description: fmt.Sprintf("%s, compacted from %d documents by kbc compact on %s", capitalize(what), len(sources), now.UTC().Format("2006-01-02"))}
	for _, s := range sources {
		fm.Supersedes = append(fm.Supersedes, s.Ref)
		fm.Sources = append(fm.Sources, s.Path)
	}
	var head strings.Builder
	enc := yaml.NewEncoder(&head)
	enc.SetIndent(2)
	if err := enc.Encode(fm); err != nil {
		return "", err
	}
	return "---\n" + head.String() + "---\n" + body + "\n", nil
}

// unwrapReply takes off what models put around a document: a code fence
// around the whole reply, and frontmatter of their own.
func unwrapReply(reply string) string {
	body := strings.TrimSpace(strings.ReplaceAll(reply, "\r\n", "\n"))
	if strings.HasPrefix(body, "```") && strings.HasSuffix(body, "```") && strings.Count(body, "```") == 2 {
		_, inner, _ := strings.Cut(body, "\n")
		body = strings.TrimSpace(strings.TrimSuffix(inner, "```"))
	}
	if rest, ok := strings.CutPrefix(body, "---\n"); ok {
		if _, after, found := strings.Cut(rest, "\n---\n"); found {
			body = strings.TrimSpace(after)
		}
	}
	return body
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
