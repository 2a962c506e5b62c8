package kbccli

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/kbqdev/kbq/artifact"
	"github.com/kbqdev/kbq/gitsource"
	"github.com/kbqdev/kbq/internal/cli"
	"github.com/kbqdev/kbq/internal/usage"
	"github.com/kbqdev/kbq/knowledge"
)

// pruneCandidate is a memory or topic that kbc prune would remove, and why.
type pruneCandidate struct {
	Path   string `json:"path"`
	Kind   string `json:"kind"`
	Topic  string `json:"topic"`
	Title  string `json:"title"`
	Reason string `json:"reason"` // "expired", "unused", "never used", "superseded" or "deprecated"
	// SupersededBy is the document that replaced a superseded one.
	SupersededBy string `json:"superseded_by,omitempty"`
	// Expires, LastUsed: the dates behind the reason, RFC 3339, or "".
	Expires  string `json:"expires,omitempty"`
	LastUsed string `json:"last_used,omitempty"`
	Uses     int    `json:"uses"`
	Detail   string `json:"detail"`
	blob     string
}

// pruneReport is kbc prune's answer.
type pruneReport struct {
	Days       int              `json:"days"`
	Log        string           `json:"usage_log"`
	LogSince   string           `json:"usage_since,omitempty"`
	Considered int              `json:"considered"`
	Candidates []pruneCandidate `json:"candidates"`
	Removed    []string         `json:"removed"`
	Kept       []string         `json:"kept_changed,omitempty"` // changed since the build: left alone
	// Named are superseded documents --apply leaves: their successor's
	// supersedes: names them, and a missing target is an error.
	Named []string `json:"kept_named,omitempty"`
}

// ageOf says how old a document is, when it can be told: a memory's
// created, an article's fetched, else (root given) its file's modification
// time in the working tree.
type ageOf func(d artifact.Document) (time.Time, bool)

// retiredFor says since when a retired document has been retired: the
// later of its own last change and its successor's, when known.
type retiredFor func(path, successor string) (time.Time, bool)

// pruneCandidates picks the memories and topics of docs that are past
// their expires date, retired (superseded or deprecated) for days, or
// unused for days: last used before then, or never used while the log has
// been recording that long and the document is older than that.
func pruneCandidates(docs []artifact.Document, retired map[string]string, sum *usage.Summary, now time.Time, days int, age ageOf, since retiredFor) []pruneCandidate {
	cutoff := now.Add(-time.Duration(days) * 24 * time.Hour)
	logCovers := !sum.Since.IsZero() && !sum.Since.After(cutoff)
	var out []pruneCandidate
	for _, d := range docs {
		if d.Kind != knowledge.KindMemory && d.Kind != knowledge.KindTopic || strings.HasPrefix(d.Path, knowledge.GlobalPathPrefix) {
			continue
		}
		c := pruneCandidate{Path: d.Path, Kind: d.Kind, Topic: d.Topic, Title: d.Title, Expires: d.Expires, blob: d.Blob}
		if successor, ok := retired[d.Path]; ok {
			if t, known := since(d.Path, successor); known && t.Before(cutoff) {
				c.Reason, c.SupersededBy = "superseded", successor
				c.Detail = fmt.Sprintf("superseded by %s since %s (%d days)", successor, t.Format("2006-01-02"), int(now.Sub(t).Hours()/24))
				if successor == "" {
					c.Reason = "deprecated"
					c.Detail = fmt.Sprintf("%s since %s (%d days)", cmp.Or(d.Status, "deprecated"), t.Format("2006-01-02"), int(now.Sub(t).Hours()/24))
				}
				out = append(out, c)
			}
			continue
		}
		u := sum.Docs[d.Path]
		if u != nil {
			c.Uses = u.Count
			c.LastUsed = u.Last.UTC().Format(time.RFC3339)
		}
		if exp, err := time.Parse(time.RFC3339, d.Expires); err == nil && !exp.After(now) {
			c.Reason, c.Detail = "expired", "expired "+exp.Format("2006-01-02")
			out = append(out, c)
			continue
		}
		switch {
		case u != nil && u.Count > 0:
			if u.Last.Before(cutoff) {
				c.Reason = "unused"
				c.Detail = fmt.Sprintf("last used %s (%d days ago)", u.Last.Format("2006-01-02"), int(now.Sub(u.Last).Hours()/24))
				out = append(out, c)
			}
		case logCovers:
			if born, ok := age(d); ok && born.Before(cutoff) {
				c.Reason = "never used"
				c.Detail = fmt.Sprintf("never used in the %d days recorded", int(now.Sub(sum.Since).Hours()/24))
				out = append(out, c)
			}
		}
	}
	return out
}

func newPruneCommand(s *cli.Streams, g *globalOptions) *cli.Command {
	var (
		index, format string
		days          int
		apply         bool
		noRefresh     bool
	)
	return &cli.Command{
		Name:      "prune",
		Usage:     "report (and with --apply remove) memories and topics unused or expired",
		UsageText: "kbc prune [--days N] [--format text|md|json] [--apply]",
		Description: `Lists the memories and topics of the artifact that are past the date of
their expires: frontmatter key, retired for --days days (superseded by
another document, or status: deprecated or superseded, since the later of
its last commit and its successor's, as the build recorded them), or that kbq has not handed out for --days
days (default 90): last used before then, or never used while kbq has
been recording use for that long and the document is older than that (a
memory by its created date, a topic by its file's modification time).

Use is what kbq search and get, kbq mcp and kbq serve recorded in the
usage log ($XDG_STATE_HOME/kbq/usage/, see kbq stats). Nothing is removed
without --apply; with it, each file listed is deleted from the working
tree and from git's index, so that the next commit removes it (a file
changed since the artifact was built is left alone and named), and the
artifact is refreshed. A superseded document its successor names in
supersedes: is kept (a missing target is an error): take it out of that
list first. --format md writes the report for a pull request.

` + exitCodesHelp,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "index", Complete: cli.Dirs, Usage: "the artifact whose usage to read, in `DIR` (default: .kbq at the repository root)", Destination: &index},
			&cli.IntFlag{Name: "days", Value: 90, Usage: "unused for `N` days", Destination: &days},
			&cli.StringFlag{Name: "format", Complete: cli.Values("text", "md", "json"), Value: "text", Usage: "report as `text`, md or json", Destination: &format},
			&cli.BoolFlag{Name: "apply", Usage: "remove the files listed and stage their removal", Destination: &apply},
			&cli.BoolFlag{Name: "no-refresh", Usage: noRefreshUsage, Destination: &noRefresh},
		},
		Action: func(c *cli.Context) error {
			if c.Args().Present() {
				return cli.Usagef("kbc prune takes no arguments")
			}
			if days < 1 {
				return cli.Usagef("--days must be at least 1")
			}
			if !slices.Contains([]string{"text", "md", "json"}, format) {
				return cli.Usagef("--format must be text, md or json, not %q", format)
			}
			repo, err := gitsource.Open(g.workDir())
			if err != nil {
				return err
			}
			if index == "" {
				if repo.Root() == "" {
					return cli.Usagef("a bare repository has no .kbq/: give --index DIR")
				}
				index = filepath.Join(repo.Root(), artifact.DefaultDir)
			}
			m, err := artifact.Read(index)
			if errors.Is(err, artifact.ErrNoArtifact) {
				return fmt.Errorf("%w: build it first with kbc build", err)
			}
			if err != nil {
				return err
			}
			sum, logPath, err := usage.ReadFile(index, s.Getenv)
			if err != nil {
				return err
			}
			now := time.Now()
			age := func(d artifact.Document) (time.Time, bool) {
				if t, err := time.Parse(time.RFC3339, d.Created); err == nil {
					return t, true
				}
				if repo.Root() == "" {
					return time.Time{}, false
				}
				fi, err := os.Stat(filepath.Join(repo.Root(), filepath.FromSlash(d.Path)))
				if err != nil {
					return time.Time{}, false
				}
				return fi.ModTime(), true
			}
			since := retiredSince(m.Documents, age)
			rep := &pruneReport{Days: days, Log: logPath, Candidates: pruneCandidates(m.Documents, m.Retired, sum, now, days, age, since), Removed: []string{}}
			if rep.Candidates == nil {
				rep.Candidates = []pruneCandidate{}
			}
			if !sum.Since.IsZero() {
				rep.LogSince = sum.Since.UTC().Format(time.RFC3339)
			}
			for _, d := range m.Documents {
				if d.Kind == knowledge.KindMemory || d.Kind == knowledge.KindTopic {
					rep.Considered++
				}
			}
			if apply && len(rep.Candidates) > 0 {
				if repo.Root() == "" {
					return cli.Usagef("a bare repository has no working tree to remove files from")
				}
				if err := applyPrune(repo, rep); err != nil {
					return err
				}
			}
			if err := writePruneReport(s.Out, rep, format, apply); err != nil {
				return err
			}
			if len(rep.Removed) > 0 && !noRefresh {
				refreshArtifact(c.Context, s, repo)
			}
			return nil
		},
	}
}

// retiredSince dates retirements from what the build recorded of each
// document: its last commit's time, or, for a file with uncommitted
// changes (or an artifact built before ages were recorded), when the
// file was last modified.
func retiredSince(docs []artifact.Document, age ageOf) retiredFor {
	byPath := make(map[string]*artifact.Document, len(docs))
	for i := range docs {
		byPath[docs[i].Path] = &docs[i]
	}
	when := func(p string) (time.Time, bool) {
		d := byPath[p]
		if d == nil {
			return time.Time{}, false
		}
		if t, err := time.Parse(time.RFC3339, d.Updated); err == nil && !d.Uncommitted {
			return t, true
		}
		return age(artifact.Document{Path: p}) // the file's modification time
	}
	return func(path, successor string) (time.Time, bool) {
		t, ok := when(path)
		if !ok {
			return t, false
		}
		if successor != "" {
			s, ok := when(successor)
			if !ok {
				return s, false
			}
			if s.After(t) {
				t = s
			}
		}
		return t, true
	}
}

// applyPrune deletes the candidates' files and takes them out of git's
// index. A file whose content is no longer what the artifact holds was
// edited since: it is kept.
func applyPrune(repo *gitsource.Repo, rep *pruneReport) error {
	for _, c := range rep.Candidates {
		if c.SupersededBy != "" {
			rep.Named = append(rep.Named, c.Path+" (named by "+c.SupersededBy+")")
			continue
		}
		abs := filepath.Join(repo.Root(), filepath.FromSlash(c.Path))
		data, err := os.ReadFile(abs)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		if gitsource.HashBlob(data) != c.blob {
			rep.Kept = append(rep.Kept, c.Path)
			continue
		}
		if err := os.Remove(abs); err != nil {
			return err
		}
		if tracked, err := repo.Tracked(abs); err != nil {
			return err
		} else if tracked {
			if err := repo.Unstage(abs); err != nil {
				return err
			}
		}
		rep.Removed = append(rep.Removed, c.Path)
	}
	return nil
}

func writePruneReport(w io.Writer, rep *pruneReport, format string, applied bool) error {
	switch format {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(rep)
	case "md":
		fmt.Fprintf(w, "### Knowledge to prune\n\n")
		if len(rep.Candidates) == 0 {
			fmt.Fprintf(w, "None of the %d memories and topics is expired or unused for %d days.\n", rep.Considered, rep.Days)
			return nil
		}
		fmt.Fprintf(w, "%d of %d memories and topics are expired or unused for %d days.\n\n| Path | Kind | Title | Why |\n|---|---|---|---|\n",
			len(rep.Candidates), rep.Considered, rep.Days)
		for _, c := range rep.Candidates {
			fmt.Fprintf(w, "| `%s` | %s | %s | %s |\n", c.Path, c.Kind, markdownCell(c.Title), c.Detail)
		}
		return nil
	}
	if len(rep.Candidates) == 0 {
		fmt.Fprintf(w, "kbc: none of the %d memories and topics is expired or unused for %d days\n", rep.Considered, rep.Days)
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, c := range rep.Candidates {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", c.Path, c.Kind, c.Detail)
	}
	tw.Flush()
	switch {
	case applied:
		fmt.Fprintf(w, "kbc: removed %d %s and staged the removals", len(rep.Removed), plural(len(rep.Removed), "file", "files"))
		if len(rep.Kept) > 0 {
			fmt.Fprintf(w, "; kept %s, changed since the artifact was built", strings.Join(rep.Kept, ", "))
		}
		if len(rep.Named) > 0 {
			fmt.Fprintf(w, "; kept %s: take it out of the successor's supersedes: list first, then prune again", strings.Join(rep.Named, ", "))
		}
		fmt.Fprintln(w)
	default:
		fmt.Fprintf(w, "kbc: %d of %d memories and topics are expired or unused for %d days; kbc prune --apply removes them\n",
			len(rep.Candidates), rep.Considered, rep.Days)
	}
	return nil
}
