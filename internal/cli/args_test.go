package cli

import (
	"strings"
	"testing"

	ucli "github.com/urfave/cli/v2"
)

func TestReorder(t *testing.T) {
	app := &ucli.App{
		Flags: []ucli.Flag{&ucli.StringFlag{Name: "C"}},
		Commands: []*ucli.Command{
			{Name: "search", Flags: []ucli.Flag{
				&ucli.BoolFlag{Name: "json"}, &ucli.IntFlag{Name: "n"}, &ucli.StringSliceFlag{Name: "kind"},
			}},
			{Name: "serve", SkipFlagParsing: true},
			{Name: "hooks", Subcommands: []*ucli.Command{
				{Name: "install", Flags: []ucli.Flag{&ucli.BoolFlag{Name: "uninstall"}}},
			}},
		},
	}
	tests := []struct{ in, want string }{
		{"search retries --json -n 3", "search --json -n 3 -- retries"},
		{"search --json -n 3 retries", "search --json -n 3 -- retries"},
		{"search a -n 3 b --kind memory c", "search -n 3 --kind memory -- a b c"},
		{"search -n=3 a", "search -n=3 -- a"},
		{"search -- -deploy --json", "search -- -deploy --json"},
		{"search a --json -- -b", "search --json -- a -b"},
		{"search - x", "search -- - x"},
		{"-C dir search x --json", "-C dir search --json -- x"},
		{"hooks install --uninstall", "hooks install --uninstall"},
		{"serve --addr 127.0.0.1:1 x", "serve --addr 127.0.0.1:1 x"},
		{"search --unknown a", "search --unknown -- a"},
		{"search a --kind", "search --kind"},
		{"search", "search"},
		{"", ""},
	}
	for _, tt := range tests {
		got := strings.Join(Reorder(app, strings.Fields(tt.in)), " ")
		if got != tt.want {
			t.Errorf("Reorder(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
