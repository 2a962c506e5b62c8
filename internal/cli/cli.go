// Package cli holds what kbc and kbq share on the command line: the
// streams every command writes to, exit codes, flag parsing that accepts
// flags after arguments, and progress on a terminal.
package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	ucli "github.com/urfave/cli/v2"
)

// Exit codes, the same for both binaries.
const (
	ExitOK      = 0 // success
	ExitFailure = 1 // validation errors, or no results where the command says so
	ExitError   = 2 // usage, I/O or artifact errors
)

var (
	// ErrUsage marks bad flags or arguments: exit 2.
	ErrUsage = errors.New("usage")
	// ErrFailure marks a command that ran and answers "no": exit 1. Its
	// output has already said why.
	ErrFailure = errors.New("failure")
	// ErrSilent marks an error whose message has already been printed; the
	// exit code comes from the exitCode function.
	ErrSilent = errors.New("already reported")
)

// Usagef returns a usage error.
func Usagef(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrUsage, fmt.Sprintf(format, args...))
}

// Streams are where a command reads and writes: data to Out, diagnostics,
// progress and status to Err. Library packages never print.
type Streams struct {
	In     io.Reader
	Out    io.Writer
	Err    io.Writer
	OutTTY bool
	ErrTTY bool
	Getenv func(string) string
}

// System returns the process's standard streams.
func System() *Streams {
	return &Streams{
		In: os.Stdin, Out: os.Stdout, Err: os.Stderr,
		OutTTY: isTerminal(os.Stdout), ErrTTY: isTerminal(os.Stderr),
		Getenv: os.Getenv,
	}
}

func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// Color reports whether Out may carry ANSI colours: a terminal, NO_COLOR
// unset, TERM not dumb.
func (s *Streams) Color() bool {
	return s.OutTTY && s.Getenv("NO_COLOR") == "" && s.Getenv("TERM") != "dumb"
}

// NewApp returns a urfave/cli application wired to s that never exits the
// process and reports usage errors as ErrUsage.
func NewApp(name, usage string, s *Streams, commands []*ucli.Command) *ucli.App {
	app := &ucli.App{
		Name:            name,
		Usage:           usage,
		Writer:          s.Out,
		ErrWriter:       s.Err,
		Commands:        commands,
		HideHelpCommand: true,
		Suggest:         true,
		ExitErrHandler:  func(*ucli.Context, error) {},
		OnUsageError: func(_ *ucli.Context, err error, _ bool) error {
			return fmt.Errorf("%w: %w", ErrUsage, err)
		},
	}
	for _, c := range commands {
		setUsageErrors(c)
	}
	return app
}

func setUsageErrors(c *ucli.Command) {
	c.OnUsageError = func(_ *ucli.Context, err error, _ bool) error {
		return fmt.Errorf("%w: %w", ErrUsage, err)
	}
	for _, sub := range c.Subcommands {
		setUsageErrors(sub)
	}
}

// Run runs app with args (without the program name) and returns the exit
// code; exitCode maps errors the commands return to codes (nil for the
// default: ErrFailure 1, anything else 2). Errors are printed to s.Err.
func Run(app *ucli.App, args []string, s *Streams, exitCode func(error) (int, bool)) int {
	var notFound string
	app.CommandNotFound = func(_ *ucli.Context, name string) { notFound = name }
	err := app.Run(append([]string{app.Name}, Reorder(app, args)...))
	if notFound != "" && err == nil {
		err = Usagef("unknown command %q", notFound)
	}
	if err == nil {
		return ExitOK
	}
	code := ExitError
	if c, ok := exitCode(err); ok {
		code = c
	} else if errors.Is(err, ErrFailure) {
		code = ExitFailure
	}
	switch {
	case errors.Is(err, ErrFailure), errors.Is(err, ErrSilent):
	case errors.Is(err, ErrUsage):
		msg := strings.TrimPrefix(err.Error(), ErrUsage.Error()+": ")
		fmt.Fprintf(s.Err, "%s: %s\nRun '%s --help' for usage.\n", app.Name, msg, helpTarget(app, args))
	default:
		fmt.Fprintf(s.Err, "%s: %v\n", app.Name, err)
	}
	return code
}

// helpTarget names the command the user ran, for "Run 'kbc build --help'".
func helpTarget(app *ucli.App, args []string) string {
	name := app.Name
	cmds := app.Commands
	for _, a := range args {
		if strings.HasPrefix(a, "-") {
			continue
		}
		var found *ucli.Command
		for _, c := range cmds {
			if c.HasName(a) {
				found = c
			}
		}
		if found == nil {
			break
		}
		name += " " + found.Name
		cmds = found.Subcommands
	}
	return name
}
