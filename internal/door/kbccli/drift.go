package kbccli

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/kbqdev/kbq/compiler"
	"github.com/kbqdev/kbq/gitsource"
	"github.com/kbqdev/kbq/internal/cli"
)

func newDriftCommand(s *cli.Streams, g *globalOptions) *cli.Command {
	var format string
	return &cli.Command{
		Name:      "drift",
		Usage:     "list knowledge naming files that changed after it did",
		UsageText: "kbc drift [REV] [--format text|md|json]",
		Description: `Lists the documents of REV (HEAD by default) that name repository paths
changed by later commits than the document's own last change: a relative
markdown link to a file, or a path in a code span (a file, or a directory
a later commit deleted or moved a file out of). Each path is listed
with those commits, newest first, and the documents oldest first: the
knowledge most likely to be out of date leads.

History is read along first parents, as git log --first-parent does: a
change a merged branch brings in counts from its merge.

A false positive is cheap to silence: touch the document in a commit, or
give it a reviewed: date in its frontmatter; commits before that date no
longer count.

EXAMPLES:
   kbc drift
   kbc drift --format md > drift.md
   kbc drift origin/main --format json

` + exitCodesHelp + `
   (drift reports; it exits 0 unless it cannot run)`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "format", Complete: cli.Values("text", "md", "json"), Usage: "print as `FORMAT`: text, md or json", Value: "text", Destination: &format},
			contextFilesFlag(),
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 1 {
				return cli.Usagef("kbc drift takes at most one revision")
			}
			if !slices.Contains(diffFormats, format) {
				return cli.Usagef("--format %q: want text, md or json", format)
			}
			rev := cmp.Or(c.Args().First(), "HEAD")
			repo, err := gitsource.Open(g.workDir())
			if err != nil {
				return err
			}
			if repo.Shallow() {
				return cli.Usagef("kbc drift compares each document with the history of the code it names, which a shallow clone lacks%s", repo.ShallowHint())
			}
			head, err := repo.Rev(rev)
			if err != nil {
				return err
			}
			entries, err := compiler.Drift(c.Context, head, repo.History(head.Info().Commit), diffOptions(c))
			if err != nil {
				return err
			}
			return writeDrift(s.Out, format, rev, entries)
		},
	}
}

// writeDrift writes the drift of rev as text, markdown or JSON.
func writeDrift(w io.Writer, format, rev string, entries []compiler.DriftEntry) error {
	var b strings.Builder
	switch format {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(entries)
	case "text":
		if len(entries) == 0 {
			fmt.Fprintf(&b, "no drift at %s: no document names a path changed after the document was\n", rev)
			break
		}
		for i, e := range entries {
			if i > 0 {
				b.WriteByte('\n')
			}
			fmt.Fprintf(&b, "%s (%s), %s\n", e.Path, e.Title, driftSince(e))
			for _, r := range e.References {
				fmt.Fprintf(&b, "%s:%d:%d: %s changed in %d later %s:\n", e.Path, r.Line, r.Col, r.Name, len(r.Commits), plural(len(r.Commits), "commit", "commits"))
				for j, c := range r.Commits {
					if j == maxDriftCommits {
						fmt.Fprintf(&b, "    and %d older (--format json lists all)\n", len(r.Commits)-j)
						break
					}
					fmt.Fprintf(&b, "    %s %s %s: %s%s\n", shortRev(c.Hash), c.Time.UTC().Format("2006-01-02"), c.Author, c.Subject, deletedNote(c))
				}
			}
		}
	case "md":
		b.WriteString("### Knowledge drift\n\n")
		if len(entries) == 0 {
			fmt.Fprintf(&b, "No document at `%s` names a path changed after the document was.\n", rev)
			break
		}
		fmt.Fprintf(&b, "%d %s at `%s` %s paths changed after %s did, oldest first.\n\n| Document | Last changed | Names | Later commits |\n|---|---|---|---|\n",
			len(entries), plural(len(entries), "document", "documents"), rev, plural(len(entries), "names", "name"), plural(len(entries), "it", "they"))
		for _, e := range entries {
			for i, r := range e.References {
				doc, since := "", ""
				if i == 0 {
					doc = fmt.Sprintf("%s (`%s`)", markdownCell(cmp.Or(e.Title, e.Path)), markdownCell(e.Path))
					since = driftSince(e)
				}
				commits := make([]string, min(len(r.Commits), maxDriftCommits))
				for j, c := range r.Commits[:len(commits)] {
					commits[j] = fmt.Sprintf("`%s` %s %s%s", shortRev(c.Hash), c.Time.UTC().Format("2006-01-02"), markdownCell(c.Subject), deletedNote(c))
				}
				if n := len(r.Commits) - len(commits); n > 0 {
					commits = append(commits, fmt.Sprintf("and %d older", n))
				}
				fmt.Fprintf(&b, "| %s | %s | `%s` (line %d) | %s |\n", doc, since, markdownCell(r.Name), r.Line, strings.Join(commits, "<br>"))
			}
		}
	default:
		return fmt.Errorf("unknown format %q (want one of %s)", format, strings.Join(diffFormats, ", "))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// maxDriftCommits is how many commits of a path text and markdown show.
const maxDriftCommits = 5

func driftSince(e compiler.DriftEntry) string {
	switch {
	case e.Reviewed != nil && e.Updated.Equal(*e.Reviewed):
		return "reviewed " + e.Updated.UTC().Format("2006-01-02")
	case e.Commit == "":
		return "unchanged in the history read"
	}
	return fmt.Sprintf("last changed %s (%s)", e.Updated.UTC().Format("2006-01-02"), shortRev(e.Commit))
}

func deletedNote(c compiler.DriftCommit) string {
	if c.Deleted {
		return " (deleted it)"
	}
	return ""
}
