package kbqcli

import (
	"slices"
	"strings"

	"github.com/kbqdev/kbq/internal/cli"
)

// Output formats of search and list.
var formats = []string{"text", "json", "jsonl", "csv", "md", "paths"}

// formatFlags are --format, -l (--files) and the older --json and --md.
type formatFlags struct {
	format   string
	paths    bool
	json, md bool
}

func (f *formatFlags) flags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "format", Complete: cli.Values(formats...), Usage: "print as `FORMAT`: text, json, jsonl, csv, md or paths", Destination: &f.format},
		&cli.BoolFlag{Name: "l", Aliases: []string{"files"}, Usage: "print only the documents' paths, one a line (--format paths)", Destination: &f.paths},
		&cli.BoolFlag{Name: "json", Usage: "print JSON (--format json)", Destination: &f.json},
		&cli.BoolFlag{Name: "md", Usage: "print markdown for agents (--format md)", Destination: &f.md},
	}
}

// resolve returns the one format asked for, "text" by default.
func (f *formatFlags) resolve() (string, error) {
	var chosen []string
	if f.format != "" {
		if !slices.Contains(formats, f.format) {
			return "", cli.Usagef("--format must be one of %s, not %q", strings.Join(formats, ", "), f.format)
		}
		chosen = append(chosen, f.format)
	}
	for _, alias := range []struct {
		set    bool
		format string
	}{{f.paths, "paths"}, {f.json, "json"}, {f.md, "md"}} {
		if alias.set && !slices.Contains(chosen, alias.format) {
			chosen = append(chosen, alias.format)
		}
	}
	switch len(chosen) {
	case 0:
		return "text", nil
	case 1:
		return chosen[0], nil
	}
	return "", cli.Usagef("choose one output format, not %s", strings.Join(chosen, " and "))
}
