package kbqcli

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/kbqdev/kbq/internal/cli"
	"github.com/kbqdev/kbq/internal/usage"
	"github.com/kbqdev/kbq/query"
)

func newGetCommand(s *cli.Streams) *cli.Command {
	var index, dir string
	var asJSON bool
	return &cli.Command{
		Name:      "get",
		Usage:     "print a whole document",
		UsageText: "kbq get TOPIC|PATH|memory:ID [--dir D] [--json]",
		Description: `Prints a document as written, frontmatter included. Name it by its path,
relative to the current directory as git's are, or absolute
(.kb/deploy.md), by its topic (deploy/steps: the path inside .kb/ without
.md) or, for memories, memory:ID. When several scopes hold the topic or id,
the one in force from --dir (default: the current directory) wins, the
deepest first.

` + ExitCodesHelp,
		Flags: []cli.Flag{
			IndexFlag(&index),
			&cli.StringFlag{Name: "dir", Usage: "resolve topics from `DIR` (default: the current directory)", Destination: &dir},
			&cli.BoolFlag{Name: "json", Usage: "print JSON with the document's metadata and content", Destination: &asJSON},
		},
		Complete: func(args []string, partial string) []string {
			if len(args) > 0 {
				return nil
			}
			return documentNames(s, index)
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return cli.Usagef("kbq get takes one TOPIC, PATH or memory:ID")
			}
			ix, err := Open(s, index)
			if err != nil {
				return err
			}
			defer ix.Close()
			d, err := RepoDir(ix.RepoRoot, dir)
			if err != nil {
				return err
			}
			ref, err := documentRef(ix, c.Args().First())
			if err != nil {
				return err
			}
			doc, err := ix.Get(c.Context, ref, d)
			if err != nil {
				return err
			}
			defer NewUsage(s).Record(ix.Dir, GetEvents(usage.ViaCLI, doc))
			if asJSON {
				return WriteJSON(s.Out, doc)
			}
			_, err = io.WriteString(s.Out, doc.Content)
			return err
		},
	}
}

func newListCommand(s *cli.Streams) *cli.Command {
	var index string
	var out formatFlags
	return &cli.Command{
		Name:      "list",
		Usage:     "list documents",
		UsageText: "kbq list [--kind K] [--tag T] [--scope S] [--format F | -l]",
		Description: `Lists the documents of the artifact with topic, kind, scope, tags and
source, in path order.

` + ExitCodesHelp,
		Flags: append([]cli.Flag{
			IndexFlag(&index),
			&cli.StringSliceFlag{Name: "kind", Usage: "only documents of `KIND` (repeatable)"},
			&cli.StringSliceFlag{Name: "tag", Usage: "only documents tagged `TAG` (repeatable)"},
			&cli.StringSliceFlag{Name: "scope", Usage: "only documents of `SCOPE` and below (repeatable)"},
		}, out.flags()...),
		Action: func(c *cli.Context) error {
			if c.Args().Present() {
				return cli.Usagef("kbq list takes no arguments; filter with --kind, --tag or --scope")
			}
			format, err := out.resolve()
			if err != nil {
				return err
			}
			ix, err := Open(s, index)
			if err != nil {
				return err
			}
			defer ix.Close()
			docs, err := ix.List(query.ListRequest{Kinds: c.StringSlice("kind"), Tags: c.StringSlice("tag"), Scopes: c.StringSlice("scope")})
			if err != nil {
				return err
			}
			switch format {
			case "json":
				err = WriteJSON(s.Out, docs)
			case "jsonl":
				err = writeJSONLines(s.Out, docs)
			case "csv":
				err = writeListCSV(s.Out, docs)
			case "md":
				err = writeListMarkdown(s.Out, docs)
			case "paths":
				paths := make([]string, len(docs))
				for i, d := range docs {
					paths[i] = d.Path
				}
				err = writePaths(s.Out, paths)
			default:
				err = writeList(s.Out, docs, s.Width())
			}
			if err != nil {
				return err
			}
			if len(docs) == 0 {
				fmt.Fprintln(s.Err, "kbq: no documents")
				return cli.ErrFailure
			}
			return nil
		},
	}
}

// documentNames lists what kbq get accepts from the artifact found from
// the current directory: topic keys and memory:IDs, for completion.
func documentNames(s *cli.Streams, index string) []string {
	cwd, err := os.Getwd()
	if err != nil {
		return nil
	}
	dir, _, err := query.Locate(index, s.Getenv("KBQ_INDEX"), cwd)
	if err != nil {
		return nil
	}
	ix, err := query.Open(dir)
	if err != nil {
		return nil
	}
	defer ix.Close()
	docs, err := ix.Documents()
	if err != nil {
		return nil
	}
	var names []string
	for _, d := range docs {
		names = append(names, d.Topic)
		if d.ID > 0 {
			names = append(names, fmt.Sprintf("memory:%d", d.ID))
		}
	}
	return names
}

// documentRef turns a path typed on the command line (one ending in .md,
// or starting with ./ or ../, or absolute) into the repository path it
// names, relative to the current directory as git's paths are. Topic keys
// and memory:ID pass unchanged.
func documentRef(ix *Opened, ref string) (string, error) {
	looksLikePath := filepath.IsAbs(ref) || strings.HasPrefix(ref, "./") || strings.HasPrefix(ref, "../") ||
		strings.EqualFold(filepath.Ext(ref), ".md")
	if !looksLikePath || strings.HasPrefix(ref, "memory:") || ix.RepoRoot == "" {
		return ref, nil
	}
	abs, err := filepath.Abs(ref)
	if err != nil {
		return "", err
	}
	rel, ok := InRepo(ix.RepoRoot, abs)
	if !ok {
		return "", cli.Usagef("%s is outside the repository at %s", ref, ix.RepoRoot)
	}
	docs, err := ix.Documents()
	if err != nil {
		return "", err
	}
	for _, d := range docs {
		if d.Path == rel {
			return rel, nil
		}
	}
	hint := "kbq list shows them"
	for _, d := range docs {
		if d.Path == filepath.ToSlash(filepath.Clean(ref)) {
			hint = "paths are relative to the current directory; from the repository root this is " + d.Path
		}
	}
	return "", fmt.Errorf("%w: %s (%s) is not a document of the artifact (%s)", query.ErrNotFound, ref, rel, hint)
}

// writeList writes the documents as a table; within width columns (0: no
// limit), long topics, tags and sources are cut short, so that one long
// URL does not make every row wrap.
func writeList(w io.Writer, docs []query.Listed, width int) error {
	if len(docs) == 0 {
		return nil
	}
	rows := [][]string{{"TOPIC", "KIND", "SCOPE", "TAGS", "SOURCE", "PATH"}}
	for _, d := range docs {
		rows = append(rows, []string{d.Topic, d.Kind, d.Scope, orDash(strings.Join(d.Tags, ",")), orDash(d.Source), d.Path})
	}
	if width > 0 {
		fitColumns(rows, width, []int{3, 4, 0}) // shorten sources, then tags, then topics
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	return tw.Flush()
}

// fitColumns cuts the cells of the columns in shrink, in turn, until the
// table's rows fit width (two spaces between columns), never below ten
// characters.
func fitColumns(rows [][]string, width int, shrink []int) {
	const gap, least = 2, 10
	widths := make([]int, len(rows[0]))
	for _, r := range rows {
		for i, c := range r {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	total := func() int {
		n := gap * (len(widths) - 1)
		for _, w := range widths {
			n += w
		}
		return n
	}
	for _, col := range shrink {
		if over := total() - width; over > 0 && widths[col] > least {
			widths[col] = max(least, widths[col]-over)
			for _, r := range rows[1:] {
				if utf8.RuneCountInString(r[col]) > widths[col] {
					r[col] = string([]rune(r[col])[:widths[col]-1]) + "…"
				}
			}
		}
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func newContextCommand(s *cli.Streams) *cli.Command {
	var index, dir string
	var wrap, asJSON bool
	hot := HotDefault
	return &cli.Command{
		Name:      "context",
		Usage:     "print the always-loaded context for a directory",
		UsageText: "kbq context [--dir D] [--wrap] [--hot N]",
		Description: `Assembles the context documents (.kb/context.md, AGENTS.md, CLAUDE.md,
GEMINI.md) in force for --dir (default: the current directory): global,
project, then each directory scope on the way down, each under its own
heading, frontmatter stripped.

Budgets: global 3 KiB, project and each directory 7 KiB; past 10 KiB in
total kbq warns on stderr, past 20 KiB it truncates (never inside a
character) and says so on stderr. --wrap wraps the text in
<system-reminder> tags and escapes such tags inside the knowledge.

KNOWLEDGE INDEX: the context ends with the --hot documents (default 5) in
force here that search and get handed out most in the last 30 days, one
line each (topic, tags, title), so that an agent knows what to search for;
before anything was used, those of highest importance. It counts in the
budgets.

` + ExitCodesHelp,
		Flags: []cli.Flag{
			IndexFlag(&index),
			&cli.StringFlag{Name: "dir", Usage: "assemble the context for `DIR` (default: the current directory)", Destination: &dir},
			&cli.BoolFlag{Name: "wrap", Usage: "wrap in <system-reminder> tags", Destination: &wrap},
			&cli.IntFlag{Name: "hot", Value: HotDefault, Usage: "list `N` documents in the closing knowledge index (0: none)", Destination: &hot},
			&cli.BoolFlag{Name: "json", Usage: "print JSON: dir, text, sources, index, warnings, truncated", Destination: &asJSON},
		},
		Action: func(c *cli.Context) error {
			if c.Args().Present() {
				return cli.Usagef("kbq context takes no arguments; give the directory with --dir")
			}
			ix, err := Open(s, index)
			if err != nil {
				return err
			}
			defer ix.Close()
			d, err := RepoDir(ix.RepoRoot, dir)
			if err != nil {
				return err
			}
			if hot < 0 {
				return cli.Usagef("--hot must be 0 or more")
			}
			opts := query.ContextOptions{Wrap: wrap, IndexSize: hot}
			if hot > 0 {
				opts.Uses = NewUsage(s).Recent(ix.Dir)
			}
			res, err := ix.Context(c.Context, d, opts)
			if err != nil {
				return err
			}
			if asJSON {
				return WriteJSON(s.Out, NewContextJSON(d, res))
			}
			for _, w := range res.Warnings {
				fmt.Fprintf(s.Err, "kbq: warning: %s\n", w)
			}
			if res.Truncated {
				fmt.Fprintf(s.Err, "kbq: error: context is over %d KiB; truncated to fit (shorten the context files)\n", query.ContextMaxBytes>>10)
			}
			if len(res.Sections) == 0 {
				fmt.Fprintf(s.Err, "kbq: no context applies to %s: add .kb/context.md (or AGENTS.md, CLAUDE.md, GEMINI.md) there or in a directory above it\n", cmp.Or(d, "the repository root"))
			}
			_, err = io.WriteString(s.Out, res.Text)
			return err
		},
	}
}

func newStatsCommand(s *cli.Streams) *cli.Command {
	var index string
	var asJSON bool
	return &cli.Command{
		Name:      "stats",
		Usage:     "describe the artifact",
		UsageText: "kbq stats [--json]",
		Description: `Counts by kind and scope, artifact size, format version, source (the
working tree, git's index or a commit, and whether the knowledge differed
from HEAD's: dirty), age, and whether the artifact is stale: knowledge
files changed on disk since a build from the working tree, or HEAD moved
since a build from a commit.

USAGE: kbq records which documents search and get hand out (the command
line, kbq mcp and kbq serve alike) in a log outside the repository,
under $XDG_STATE_HOME/kbq/usage/ (~/.local/state/kbq/usage/). stats lists
the most and least used documents and those never used. KBQ_USAGE=off
stops recording (it is off by default when CI=true); KBQ_USAGE_QUERIES=1
records the query text too.

` + ExitCodesHelp,
		Flags: []cli.Flag{
			IndexFlag(&index),
			&cli.BoolFlag{Name: "json", Usage: "print JSON", Destination: &asJSON},
		},
		Action: func(c *cli.Context) error {
			if c.Args().Present() {
				return cli.Usagef("kbq stats takes no arguments")
			}
			ix, err := Open(s, index)
			if err != nil {
				return err
			}
			defer ix.Close()
			st, err := ix.Stats(time.Now())
			if err != nil {
				return err
			}
			fresh := ix.Fresh()
			st.Stale, st.Changed = fresh.Notice != "", fresh.Changed
			use, err := ReadUsageStats(s, ix.Index, 5)
			if err != nil {
				return err
			}
			if asJSON {
				return WriteJSON(s.Out, struct {
					*query.Stats
					Usage *UsageStats `json:"usage"`
				}{st, use})
			}
			return writeStats(s.Out, st, use)
		},
	}
}

func writeStats(w io.Writer, st *query.Stats, use *UsageStats) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "artifact\t%s\n", st.Dir)
	fmt.Fprintf(tw, "documents\t%d\n", st.Documents)
	fmt.Fprintf(tw, "chunks\t%d\n", st.Chunks)
	for _, k := range sortedKeys(st.ByKind) {
		fmt.Fprintf(tw, "  %s\t%d\n", k, st.ByKind[k])
	}
	fmt.Fprintf(tw, "scopes\t%d\n", len(st.ByScope))
	for _, k := range sortedKeys(st.ByScope) {
		fmt.Fprintf(tw, "  %s\t%d\n", k, st.ByScope[k])
	}
	fmt.Fprintf(tw, "size\t%s\n", humanSize(st.Bytes))
	fmt.Fprintf(tw, "format\t%d (kbc %s)\n", st.FormatVersion, st.CompilerVersion)
	src := st.Source.Mode
	if st.Source.Commit != "" {
		src += " " + st.Source.Commit
	}
	if st.Source.Dirty {
		src += " (dirty)"
	}
	fmt.Fprintf(tw, "source\t%s\n", src)
	switch {
	case len(st.Changed) > 0:
		fmt.Fprintf(tw, "stale\t%s changed since\n", strings.Join(st.Changed, ", "))
	case st.Stale:
		fmt.Fprintf(tw, "stale\tHEAD moved since\n")
	}
	now := time.Now()
	// A build of a clean commit records the commit's time: the artifact is
	// the commit's. Otherwise the time is the build's.
	label := "commit time"
	if st.Source.Dirty || st.Source.Commit == "" {
		label = "built"
	}
	fmt.Fprintf(tw, "%s\t%s (%s)\n", label, st.BuiltAt.UTC().Format("2006-01-02 15:04 UTC"), ago(now.Sub(st.BuiltAt)))
	if !st.WrittenAt.IsZero() {
		fmt.Fprintf(tw, "written\t%s (%s)\n", st.WrittenAt.UTC().Format("2006-01-02 15:04 UTC"), ago(now.Sub(st.WrittenAt)))
	}
	fmt.Fprintf(tw, "global scope\t%v\n", st.Global)
	writeUsageStats(tw, use, time.Now())
	return tw.Flush()
}

func sortedKeys(m map[string]int) []string {
	return slices.Sorted(maps.Keys(m))
}

// ContextJSON is the JSON of kbq context --json and of the servers.
type ContextJSON struct {
	Dir  string `json:"dir"`
	Text string `json:"text"`
	// Sources are the context files included, in order.
	Sources []string `json:"sources"`
	// Index lists the documents of the knowledge index, ranked by IndexBy
	// ("use" or "importance").
	Index     []string `json:"index"`
	IndexBy   string   `json:"index_by,omitempty"`
	Warnings  []string `json:"warnings"`
	Truncated bool     `json:"truncated"`
}

// NewContextJSON is the JSON of res, assembled for dir.
func NewContextJSON(dir string, res *query.ContextResult) ContextJSON {
	out := ContextJSON{Dir: dir, Text: res.Text, Sources: []string{}, Index: []string{}, IndexBy: res.IndexBy,
		Warnings: []string{}, Truncated: res.Truncated}
	for _, sec := range res.Sections {
		out.Sources = append(out.Sources, sec.Paths...)
	}
	out.Index = append(out.Index, res.Index...)
	out.Warnings = append(out.Warnings, res.Warnings...)
	return out
}
