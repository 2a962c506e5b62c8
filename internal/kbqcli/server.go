package kbqcli

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"syscall"

	"github.com/kbqdev/kbq/internal/cli"
)

// ServerBinary is the companion program that runs kbq serve and kbq mcp.
// The servers need net/http, TLS and the MCP SDK, which would double kbq's
// size and slow the start of every search; kbq runs them as a separate
// program instead, the way git runs its external commands.
const ServerBinary = "kbq-serve"

// newServerCommand is a command that kbq-serve implements.
func newServerCommand(s *cli.Streams, name, usage, usageText string) *cli.Command {
	return &cli.Command{
		Name:            name,
		Usage:           usage,
		UsageText:       usageText,
		SkipFlagParsing: true,
		Description:     "Run kbq " + name + " --help for its options. It is implemented by " + ServerBinary + ", found next to kbq or on PATH.",
		Action: func(c *cli.Context) error {
			return runServer(s, append([]string{name}, c.Args().Slice()...))
		},
	}
}

// runServer runs kbq-serve with args and the same streams, passes signals
// on, and exits with its exit code.
func runServer(s *cli.Streams, args []string) error {
	path, err := findServer()
	if err != nil {
		return fmt.Errorf("kbq %s is implemented by %s: %w", args[0], ServerBinary, err)
	}
	cmd := exec.Command(path, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = s.In, s.Out, s.Err
	signals := make(chan os.Signal, 2)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(signals)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("run %s: %w", path, err)
	}
	go func() {
		for sig := range signals {
			cmd.Process.Signal(sig)
		}
	}()
	err = cmd.Wait()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exitStatus(exit.ExitCode())
	}
	return err
}

// exitStatus is an exit code passed through from kbq-serve, which has
// already said what went wrong.
type exitStatus int

func (e exitStatus) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

func (e exitStatus) Unwrap() error { return cli.ErrSilent }

// findServer looks for kbq-serve beside the running kbq, then on PATH.
func findServer() (string, error) {
	name := ServerBinary
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	if self, err := os.Executable(); err == nil {
		if resolved, err := filepath.EvalSymlinks(self); err == nil {
			self = resolved
		}
		beside := filepath.Join(filepath.Dir(self), name)
		if fi, err := os.Stat(beside); err == nil && !fi.IsDir() {
			return beside, nil
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("%s is not beside kbq or on PATH: install it with go install github.com/kbqdev/kbq/cmd/kbq-serve@latest (github.com/kbqdev/kbq/cmd/...@latest installs kbc, kbq and kbq-serve together; in a checkout, go build -o <kbq's directory> ./cmd/kbq-serve)", ServerBinary)
}
