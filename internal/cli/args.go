package cli

import (
	"strings"

	ucli "github.com/urfave/cli/v2"
)

// Reorder moves flags that follow arguments in front of them, so that
// "kbq search retries --json -n 3" parses like "kbq search --json -n 3
// retries": urfave/cli, like Go's flag package, stops at the first argument.
// A "--" ends the flags as usual; everything after it is an argument, so a
// query may start with a dash. Flags of a command are recognised by its
// flag definitions, so a flag's value is never mistaken for an argument.
func Reorder(app *ucli.App, args []string) []string {
	return reorder(app.Flags, app.Commands, args)
}

func reorder(flags []ucli.Flag, cmds []*ucli.Command, args []string) []string {
	var front, positional []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			positional = append(positional, args[i+1:]...)
			break
		}
		if len(a) > 1 && strings.HasPrefix(a, "-") {
			front = append(front, a)
			name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
			if !hasValue && takesValue(flags, name) {
				if i+1 == len(args) {
					// A flag missing its value ends the line: leave it
					// last, for the flag parser to say so, rather than
					// let it take the "--" put before the arguments.
					return front
				}
				i++
				front = append(front, args[i])
			}
			continue
		}
		if len(positional) == 0 {
			if sub := findCommand(cmds, a); sub != nil {
				if sub.SkipFlagParsing {
					// The command parses its own arguments.
					return append(append(front, a), args[i+1:]...)
				}
				rest := reorder(sub.Flags, sub.Subcommands, args[i+1:])
				return append(append(front, a), rest...)
			}
		}
		positional = append(positional, a)
	}
	if len(positional) == 0 {
		return front
	}
	return append(append(front, "--"), positional...)
}

func findCommand(cmds []*ucli.Command, name string) *ucli.Command {
	for _, c := range cmds {
		if c.HasName(name) {
			return c
		}
	}
	return nil
}

func takesValue(flags []ucli.Flag, name string) bool {
	for _, f := range flags {
		for _, n := range f.Names() {
			if n != name {
				continue
			}
			tv, ok := f.(interface{ TakesValue() bool })
			return ok && tv.TakesValue()
		}
	}
	return false
}
