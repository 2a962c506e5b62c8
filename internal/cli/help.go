package cli

import (
	"fmt"
	"io"
	"strings"
)

// writeHelp writes cmd's --help: what it does, its synopsis, description,
// commands and flags.
func writeHelp(w io.Writer, cmd *Command) {
	var b strings.Builder
	fmt.Fprintf(&b, "%s - %s\n\nUSAGE:\n   %s\n", cmd.FullName(), cmd.Usage, synopsis(cmd))
	if cmd.Description != "" {
		b.WriteString("\nDESCRIPTION:\n")
		for _, line := range strings.Split(strings.TrimRight(cmd.Description, "\n"), "\n") {
			if line != "" {
				b.WriteString("   " + line)
			}
			b.WriteByte('\n')
		}
	}
	rows := commandRows(cmd, true)
	if len(rows) > 0 {
		b.WriteString("\nCOMMANDS:\n")
		table(&b, rows)
	}
	rows = rows[:0]
	for _, f := range cmd.Flags {
		rows = append(rows, flagRow(f))
	}
	rows = append(rows, [2]string{"-h, --help", "show help"})
	if cmd.parent == nil && cmd.Version != nil {
		rows = append(rows, [2]string{"-v, --version", "print the version"})
	}
	b.WriteString("\nOPTIONS:\n")
	table(&b, rows)
	rows = rows[:0]
	for c := cmd.parent; c != nil; c = c.parent {
		for _, f := range c.Flags {
			rows = append(rows, flagRow(f))
		}
	}
	if len(rows) > 0 {
		b.WriteString("\nGLOBAL OPTIONS:\n")
		table(&b, rows)
	}
	if len(cmd.Commands) > 0 {
		fmt.Fprintf(&b, "\nRun '%s help COMMAND' for more about a command.\n", cmd.FullName())
	}
	io.WriteString(w, b.String())
}

// writeUsage writes the short usage printed, on stderr, when a program or a
// command that needs a subcommand is run without one.
func writeUsage(w io.Writer, cmd *Command) {
	var b strings.Builder
	fmt.Fprintf(&b, "%s - %s\n\nUSAGE:\n   %s\n\nCOMMANDS:\n", cmd.FullName(), cmd.Usage, synopsis(cmd))
	table(&b, commandRows(cmd, false))
	fmt.Fprintf(&b, "\nRun '%s --help' for more.\n", cmd.FullName())
	io.WriteString(w, b.String())
}

// commandRows lists cmd's visible subcommands with their usage, by name
// or, with aliases, by every name.
func commandRows(cmd *Command, aliases bool) [][2]string {
	var rows [][2]string
	for _, sub := range cmd.Commands {
		if sub.Hidden {
			continue
		}
		name := sub.Name
		if aliases {
			name = strings.Join(sub.names(), ", ")
		}
		rows = append(rows, [2]string{name, sub.Usage})
	}
	return rows
}

func synopsis(cmd *Command) string {
	switch {
	case cmd.UsageText != "":
		return strings.ReplaceAll(strings.TrimRight(cmd.UsageText, "\n"), "\n", "\n   ")
	case len(cmd.Commands) > 0:
		return cmd.FullName() + " COMMAND [options]"
	}
	return cmd.FullName() + " [options]"
}

// flagRow is a flag's line in OPTIONS: its names with the value's
// placeholder, and its usage with the default.
func flagRow(f Flag) [2]string {
	usage, def := f.help()
	value, text := placeholder(f, usage)
	var names []string
	for _, n := range f.Names() {
		names = append(names, dashed(n))
	}
	left := strings.Join(names, ", ")
	if len(f.Names()[0]) > 1 {
		left = "    " + left // long names line up under those of -n, --name
	}
	if value != "" {
		left += " " + value
	}
	if def != "" {
		text += " (default: " + def + ")"
	}
	return [2]string{left, strings.TrimSpace(text)}
}

// table writes two aligned columns, indented.
func table(b *strings.Builder, rows [][2]string) {
	width := 0
	for _, r := range rows {
		width = max(width, len(r[0]))
	}
	for _, r := range rows {
		line := fmt.Sprintf("   %-*s  %s", width, r[0], r[1])
		b.WriteString(strings.TrimRight(line, " ") + "\n")
	}
}
