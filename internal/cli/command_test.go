package cli

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// testProgram is a small program whose search action records what it saw.
type testProgram struct {
	root *Command
	dir  string
	json bool
	n    int
	seen string
}

func newTestProgram() *testProgram {
	p := &testProgram{}
	report := func(c *Context) error {
		p.seen = fmt.Sprintf("%s args=%q json=%v n=%d kind=%q dir=%q nset=%v",
			c.Command.FullName(), c.Args().Slice(), p.json, p.n, c.StringSlice("kind"), p.dir, c.IsSet("n"))
		return nil
	}
	p.root = &Command{
		Name: "prog", Usage: "test program", Version: func() string { return "1.0" },
		Flags: []Flag{&StringFlag{Name: "C", Usage: "run in `DIR`", Destination: &p.dir}},
		Commands: []*Command{
			{Name: "search", Usage: "search things", Action: report, Flags: []Flag{
				&BoolFlag{Name: "json", Destination: &p.json},
				&IntFlag{Name: "n", Aliases: []string{"limit"}, Usage: "show `N` results", Value: 5, Destination: &p.n},
				&StringSliceFlag{Name: "kind", Value: []string{"all"}},
			}},
			{Name: "serve", Usage: "serve", SkipFlagParsing: true, Action: report},
			{Name: "debug", Usage: "for developers", Hidden: true, Action: report},
			{Name: "hooks", Usage: "manage hooks", Commands: []*Command{
				{Name: "install", Usage: "install them", Action: report},
			}},
		},
	}
	return p
}

func run(t *testing.T, p *testProgram, line string) (code int, out, errOut string) {
	t.Helper()
	var o, e bytes.Buffer
	s := &Streams{Out: &o, Err: &e, Getenv: func(string) string { return "" }}
	code = Run(p.root, strings.Fields(line), s, func(error) (int, bool) { return 0, false })
	return code, o.String(), e.String()
}

func TestParse(t *testing.T) {
	tests := []struct{ line, want string }{
		{"search retries --json -n 3", `prog search args=["retries"] json=true n=3 kind=["all"] dir="" nset=true`},
		{"search a -n 3 b --kind memory c", `prog search args=["a" "b" "c"] json=false n=3 kind=["memory"] dir="" nset=true`},
		{"search -n5 a", `prog search args=["a"] json=false n=5 kind=["all"] dir="" nset=true`},
		{"search -n=7 --limit 8 a", `prog search args=["a"] json=false n=8 kind=["all"] dir="" nset=true`},
		{"search --kind a,b --kind c x", `prog search args=["x"] json=false n=5 kind=["a" "b" "c"] dir="" nset=false`},
		{"search --json=false -json x", `prog search args=["x"] json=true n=5 kind=["all"] dir="" nset=false`},
		{"search -- -deploy --json", `prog search args=["-deploy" "--json"] json=false n=5 kind=["all"] dir="" nset=false`},
		{"search - x", `prog search args=["-" "x"] json=false n=5 kind=["all"] dir="" nset=false`},
		{"-C dir search x", `prog search args=["x"] json=false n=5 kind=["all"] dir="dir" nset=false`},
		{"search x -C dir", `prog search args=["x"] json=false n=5 kind=["all"] dir="dir" nset=false`},
		{"hooks install", `prog hooks install args=[] json=false n=5 kind=[] dir="" nset=false`},
		{"debug x", `prog debug args=["x"] json=false n=5 kind=[] dir="" nset=false`},
		{"serve --addr 127.0.0.1:1 -h", `prog serve args=["--addr" "127.0.0.1:1" "-h"] json=false n=5 kind=[] dir="" nset=false`},
	}
	for _, tt := range tests {
		p := newTestProgram()
		code, _, errOut := run(t, p, tt.line)
		if code != 0 || p.seen != tt.want {
			t.Errorf("%q: exit %d, saw %s (stderr %q)\n\twant %s", tt.line, code, p.seen, errOut, tt.want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct{ line, want string }{
		{"search --jsno x", "prog: unknown flag --jsno: did you mean --json?\nRun 'prog search --help' for usage.\n"},
		{"search -bogus", "prog: unknown flag -bogus\nRun 'prog search --help' for usage.\n"},
		{"search -n", "prog: -n needs a value\nRun 'prog search --help' for usage.\n"},
		{"search -n lots", "prog: -n: \"lots\" is not a whole number\nRun 'prog search --help' for usage.\n"},
		{"search --json=maybe", "prog: --json: \"maybe\" is not true or false\nRun 'prog search --help' for usage.\n"},
		{"serach x", "prog: unknown command \"serach\" for \"prog\": did you mean \"search\"?\nRun 'prog --help' for usage.\n"},
		{"frobnicate", "prog: unknown command \"frobnicate\" for \"prog\"\nRun 'prog --help' for usage.\n"},
		{"hooks instal", "prog: unknown command \"instal\" for \"prog hooks\": did you mean \"install\"?\nRun 'prog hooks --help' for usage.\n"},
	}
	for _, tt := range tests {
		code, out, errOut := run(t, newTestProgram(), tt.line)
		if code != ExitError || out != "" || errOut != tt.want {
			t.Errorf("%q: exit %d, stdout %q, stderr %q\n\twant exit 2, stderr %q", tt.line, code, out, errOut, tt.want)
		}
	}
}

func TestHelpAndUsage(t *testing.T) {
	for _, line := range []string{"search --help", "search x -h", "help search", "-C d help search"} {
		code, out, errOut := run(t, newTestProgram(), line)
		if code != 0 || errOut != "" || !strings.HasPrefix(out, "prog search - search things\n") ||
			!hasRow(out, "-n, --limit N", "show N results (default: 5)") ||
			!hasRow(out, "--kind VALUE", "(default: all)") ||
			!strings.Contains(out, "GLOBAL OPTIONS:\n   -C DIR  run in DIR\n") {
			t.Errorf("%q: exit %d, stderr %q, help:\n%s", line, code, errOut, out)
		}
	}
	for _, line := range []string{"--version", "version"} {
		code, out, _ := run(t, newTestProgram(), line)
		if code != 0 || out != "prog version 1.0\n" {
			t.Errorf("%s: exit %d, %q", line, code, out)
		}
	}
	for _, line := range []string{"", "hooks", "-C dir"} {
		code, out, errOut := run(t, newTestProgram(), line)
		if code != ExitError || out != "" || !strings.Contains(errOut, "USAGE:") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want the usage on stderr, exit 2", line, code, out, errOut)
		}
	}
	code, out, _ := run(t, newTestProgram(), "--help")
	if code != 0 || !strings.Contains(out, "\n   search  search things\n") || !strings.Contains(out, "Run 'prog help COMMAND'") ||
		strings.Contains(out, "debug") {
		t.Errorf("--help: exit %d:\n%s", code, out)
	}
}

// hasRow reports whether help has a line of two columns, left and right.
func hasRow(help, left, right string) bool {
	for _, line := range strings.Split(help, "\n") {
		l, r, ok := strings.Cut(strings.TrimSpace(line), "  ")
		if ok && l == left && strings.TrimSpace(r) == right {
			return true
		}
	}
	return false
}

func TestExitCodes(t *testing.T) {
	fail := errors.New("boom")
	p := &Command{Name: "prog", Commands: []*Command{
		{Name: "no", Action: func(*Context) error { return ErrFailure }},
		{Name: "err", Action: func(*Context) error { return fail }},
		{Name: "mapped", Action: func(*Context) error { return fmt.Errorf("wrapped: %w", fail) }},
	}}
	mapped := func(err error) (int, bool) {
		if strings.HasPrefix(err.Error(), "wrapped") {
			return 7, true
		}
		return 0, false
	}
	for name, want := range map[string]int{"no": 1, "err": 2, "mapped": 7} {
		var e bytes.Buffer
		if code := Run(p, []string{name}, &Streams{Out: &e, Err: &e}, mapped); code != want {
			t.Errorf("%s: exit %d, want %d", name, code, want)
		}
	}
}

func TestComplete(t *testing.T) {
	var n int
	root := &Command{Name: "prog", Flags: []Flag{&StringFlag{Name: "C"}}, Commands: []*Command{
		{Name: "get", Flags: []Flag{&BoolFlag{Name: "json"}, &IntFlag{Name: "n", Destination: &n}},
			Complete: func(args []string, partial string) []string { return []string{"deploy", "docs/guide", "memory:1"} },
			Action:   func(*Context) error { return nil }},
		{Name: "hooks", Commands: []*Command{{Name: "install"}, {Name: "uninstall"}}},
		{Name: "secret", Hidden: true},
	}}
	link(root)
	for _, c := range []struct {
		words []string
		want  string
	}{
		{nil, "get hooks"},
		{[]string{"g"}, "get"},
		{[]string{"hooks", "u"}, "uninstall"},
		{[]string{"get", "d"}, "deploy docs/guide"},
		{[]string{"get", "-n", "5", "me"}, "memory:1"}, // a flag's value is skipped
		{[]string{"-C", "dir", "get", ""}, "deploy docs/guide memory:1"},
		{[]string{"get", "deploy", ""}, "deploy docs/guide memory:1"}, // Complete sees the args
		{[]string{"get", "--j"}, "--json"},
		{[]string{"get", "-"}, "--help --json -C -n"},
		{[]string{"nope", ""}, ""},
	} {
		if got := strings.Join(complete(root, c.words), " "); got != c.want {
			t.Errorf("complete(%q) = %q, want %q", c.words, got, c.want)
		}
	}
}
