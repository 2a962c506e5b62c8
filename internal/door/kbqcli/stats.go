package kbqcli

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/kbqdev/kbq/internal/cli"
	"github.com/kbqdev/kbq/internal/door/reader"
	"github.com/kbqdev/kbq/internal/door/render"
	"github.com/kbqdev/kbq/internal/units"
	"github.com/kbqdev/kbq/internal/visible"
	"github.com/kbqdev/kbq/query"
)

type statsOptions struct {
	io     *cli.Streams
	index  string
	asJSON bool
}

func newStatsCommand(s *cli.Streams) *cli.Command {
	o := &statsOptions{io: s}
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

` + reader.ExitCodesHelp,
		Flags: []cli.Flag{
			reader.IndexFlag(&o.index),
			&cli.BoolFlag{Name: "json", Usage: "print JSON", Destination: &o.asJSON},
		},
		Action: func(c *cli.Context) error {
			if c.Args().Present() {
				return cli.Usagef("kbq stats takes no arguments")
			}
			return runStats(o)
		},
	}
}

func runStats(o *statsOptions) error {
	s := o.io
	ix, err := open(s, &reader.Sources{Indexes: optional(o.index)})
	if err != nil {
		return err
	}
	defer closeOpened(s, ix)
	st, err := ix.Stats(time.Now())
	if err != nil {
		return err
	}
	fresh := ix.Fresh()
	st.Stale, st.Changed = fresh.Notice != "", fresh.Changed
	// A usage log that cannot be read leaves the rest of the reader.
	use, err := ReadUsageStats(s, ix.Parts()[0].Index, 5)
	if err != nil {
		fmt.Fprintf(s.Err, "kbq: note: the usage log cannot be read (%v)\n", err)
		use = &UsageStats{Error: err.Error(), Most: []DocUse{}, Least: []DocUse{}, Never: []string{}}
	}
	if o.asJSON {
		return render.JSON(s.Out, struct {
			*query.Stats
			Usage *UsageStats `json:"usage"`
		}{st, use})
	}
	return writeStats(s.Out, st, use)
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
		fmt.Fprintf(tw, "  %s\t%d\n", visible.Line(k), st.ByScope[k])
	}
	fmt.Fprintf(tw, "size\t%s\n", units.Bytes(st.Bytes))
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
		fmt.Fprintf(tw, "stale\t%s changed since\n", visible.Line(strings.Join(st.Changed, ", ")))
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
