package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/kbqdev/kbq/internal/suggest"
)

// A Command is a program or one of its commands: its flags, its
// subcommands and the action it runs. The program is the root Command.
type Command struct {
	Name        string
	Aliases     []string
	Usage       string        // one line, in the parent's list of commands
	UsageText   string        // the synopsis in --help; a default is made from the flags
	Description string        // paragraphs for --help
	Version     func() string // the root's version, for --version
	Flags       []Flag
	Commands    []*Command
	// Action runs the command. A command with subcommands and no action
	// prints its usage on stderr and exits 2 when none is named.
	Action func(*Context) error
	// Before, on the root command, runs before the action of whichever
	// command runs, with its context: for global flags such as -C.
	Before func(*Context) error
	// Complete, when set, lists what may complete partial as the command's
	// next argument, after args: for shell completion (Completion).
	Complete func(args []string, partial string) []string
	// SkipFlagParsing hands every argument after the command's name to
	// Action untouched: for commands another program implements.
	SkipFlagParsing bool
	Hidden          bool // left out of the parent's list of commands
	// Quick marks a command that most often answers in milliseconds and
	// leaves nothing half-written when it is killed: its Ctrl-C handler
	// is installed only once it has run for quickAfter, and before that
	// Ctrl-C stops it as the system does. Installing the handler at once
	// started two threads and cost a fresh kbq search about 0.6 ms.
	Quick bool

	parent *Command
}

// HasName reports whether name is the command's name or an alias.
func (c *Command) HasName(name string) bool {
	for _, n := range c.names() {
		if n == name {
			return true
		}
	}
	return false
}

func (c *Command) names() []string { return append([]string{c.Name}, c.Aliases...) }

// FullName is the command as typed from the program on: "kbc hooks install".
func (c *Command) FullName() string {
	if c.parent == nil {
		return c.Name
	}
	return c.parent.FullName() + " " + c.Name
}

func (c *Command) find(name string) *Command {
	for _, sub := range c.Commands {
		if sub.HasName(name) {
			return sub
		}
	}
	return nil
}

// flag returns the flag of c, or of a command above it, called name.
func (c *Command) flag(name string) Flag {
	for cmd := c; cmd != nil; cmd = cmd.parent {
		for _, f := range cmd.Flags {
			for _, n := range f.Names() {
				if n == name {
					return f
				}
			}
		}
	}
	return nil
}

// Context is what an action sees: its arguments and flags.
type Context struct {
	Context context.Context
	Command *Command
	args    Args
	set     map[Flag]bool
}

// Args returns the arguments left after the flags.
func (c *Context) Args() Args { return c.args }

// NArg returns the number of arguments.
func (c *Context) NArg() int { return len(c.args) }

// IsSet reports whether the flag called name was given.
func (c *Context) IsSet(name string) bool { return c.set[c.Command.flag(name)] }

// StringSlice returns the values of the StringSliceFlag called name.
func (c *Context) StringSlice(name string) []string {
	if f, ok := c.Command.flag(name).(*StringSliceFlag); ok {
		return f.value
	}
	return nil
}

// Args are a command's arguments.
type Args []string

// Slice returns the arguments.
func (a Args) Slice() []string { return a }

// Present reports whether there are any.
func (a Args) Present() bool { return len(a) > 0 }

// First returns the first argument, or "".
func (a Args) First() string { return a.Get(0) }

// Get returns the nth argument, or "".
func (a Args) Get(n int) string {
	if n < 0 || n >= len(a) {
		return ""
	}
	return a[n]
}

// errHelp and errVersion end parsing when help or the version was asked for.
var (
	errHelp    = errors.New("help requested")
	errVersion = errors.New("version requested")
)

// invocation is one parsed command line.
type invocation struct {
	cmd  *Command
	args Args
	set  map[Flag]bool
	// helpFor is the command whose help was asked for by "help CMD".
	helpFor *Command
}

// parse finds the command args name and parses its flags. Flags may come
// before or after arguments; "--" ends them. A command's flags include those
// of the commands above it.
func parse(root *Command, args []string) (*invocation, error) {
	link(root)
	resetFlags(root)
	inv := &invocation{cmd: root, set: map[Flag]bool{}}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if inv.cmd.SkipFlagParsing {
			inv.args = append(inv.args, args[i:]...)
			return inv, nil
		}
		if a == "--" {
			inv.args = append(inv.args, args[i+1:]...)
			break
		}
		if len(a) > 1 && a[0] == '-' {
			used, err := inv.flag(args[i:])
			if err != nil {
				return inv, err
			}
			i += used - 1
			continue
		}
		if len(inv.args) == 0 && len(inv.cmd.Commands) > 0 {
			if a == "help" {
				target, err := helpTarget(inv.cmd, args[i+1:])
				inv.helpFor = target
				if err != nil {
					return inv, err
				}
				return inv, errHelp
			}
			sub := inv.cmd.find(a)
			if sub == nil && a == "version" && inv.cmd.parent == nil && inv.cmd.Version != nil {
				return inv, errVersion // "kbq version", as --version
			}
			if sub == nil {
				return inv, unknownCommand(inv.cmd, a)
			}
			inv.cmd = sub
			continue
		}
		inv.args = append(inv.args, a)
	}
	return inv, nil
}

// flag parses the flag at args[0] and returns how many arguments it used.
func (inv *invocation) flag(args []string) (int, error) {
	typed, value, hasValue := strings.Cut(args[0], "=")
	name := strings.TrimPrefix(strings.TrimPrefix(typed, "-"), "-")
	f := inv.cmd.flag(name)
	if f == nil && !hasValue && !strings.HasPrefix(typed, "--") && len(name) > 1 {
		// A one-letter flag with its value glued on: -n5.
		if g := inv.cmd.flag(name[:1]); g != nil && g.TakesValue() {
			f, typed, value, hasValue = g, "-"+name[:1], name[1:], true
		}
	}
	if f == nil {
		switch name {
		case "h", "help":
			return 1, errHelp
		case "v", "version":
			if inv.cmd.parent == nil && inv.cmd.Version != nil {
				return 1, errVersion
			}
		}
		return 1, unknownFlag(inv.cmd, typed)
	}
	used := 1
	switch {
	case !f.TakesValue() && !hasValue:
		value = "true"
	case !hasValue:
		if len(args) < 2 {
			return 1, Usagef("%s needs a value", typed)
		}
		value, used = args[1], 2
	}
	if err := f.Set(value); err != nil {
		return used, Usagef("%s: %v", typed, err)
	}
	inv.set[f] = true
	return used, nil
}

// helpTarget is the command "help A B" asks about, from cmd down.
func helpTarget(cmd *Command, args []string) (*Command, error) {
	for _, a := range args {
		if strings.HasPrefix(a, "-") {
			continue
		}
		sub := cmd.find(a)
		if sub == nil {
			return cmd, unknownCommand(cmd, a)
		}
		cmd = sub
	}
	return cmd, nil
}

func unknownCommand(cmd *Command, name string) error {
	var candidates []string
	for _, sub := range cmd.Commands {
		if !sub.Hidden {
			candidates = append(candidates, sub.names()...)
		}
	}
	msg := fmt.Sprintf("unknown command %q for %q", name, cmd.FullName())
	if s := suggest.Closest(name, candidates); s != "" {
		msg += fmt.Sprintf(": did you mean %q?", s)
	}
	return Usagef("%s", msg)
}

func unknownFlag(cmd *Command, typed string) error {
	var candidates []string
	for c := cmd; c != nil; c = c.parent {
		for _, f := range c.Flags {
			for _, n := range f.Names() {
				candidates = append(candidates, dashed(n))
			}
		}
	}
	candidates = append(candidates, "--help")
	msg := "unknown flag " + typed
	if s := suggest.Closest(dashed(strings.TrimLeft(typed, "-")), candidates); s != "" {
		msg += ": did you mean " + s + "?"
	}
	return Usagef("%s", msg)
}

// link points every command at its parent.
func link(c *Command) {
	for _, sub := range c.Commands {
		sub.parent = c
		link(sub)
	}
}

func resetFlags(c *Command) {
	for _, f := range c.Flags {
		f.reset()
	}
	for _, sub := range c.Commands {
		resetFlags(sub)
	}
}
