//go:build unix

package cli

import (
	"bytes"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Ctrl-C cancels the command's context, and the program exits 130 saying
// it was interrupted.
func TestInterruptExits130(t *testing.T) {
	started := make(chan struct{})
	root := &Command{Name: "prog", Commands: []*Command{{
		Name: "wait",
		Action: func(c *Context) error {
			close(started)
			return untilCanceled(c)
		},
	}}}
	var out, errb bytes.Buffer
	s := &Streams{In: strings.NewReader(""), Out: &out, Err: &errb, Getenv: func(string) string { return "" }}
	go func() {
		<-started
		syscall.Kill(syscall.Getpid(), syscall.SIGINT)
	}()
	code := Run(root, []string{"wait"}, s, func(error) (int, bool) { return 0, false })
	if code != ExitInterrupted || !strings.Contains(errb.String(), "prog: interrupted") {
		t.Errorf("exit %d, stderr %q", code, errb.String())
	}
}

// A Quick command that ends at once installs no Ctrl-C handler; one that
// runs longer than quickAfter installs it, and Ctrl-C then cancels it as
// it cancels any command.
func TestQuickCommandsInstallTheHandlerLate(t *testing.T) {
	installed := make(chan struct{}, 1)
	handlerInstalled = func() { installed <- struct{}{} }
	defer func(after time.Duration) { handlerInstalled, quickAfter = func() {}, after }(quickAfter)
	quickAfter = 20 * time.Millisecond
	root := &Command{Name: "prog", Commands: []*Command{
		{Name: "fast", Quick: true, Action: func(c *Context) error { return nil }},
		{Name: "slow", Quick: true, Action: untilCanceled},
	}}
	var out, errb bytes.Buffer
	s := &Streams{In: strings.NewReader(""), Out: &out, Err: &errb, Getenv: func(string) string { return "" }}
	noCode := func(error) (int, bool) { return 0, false }
	if code := Run(root, []string{"fast"}, s, noCode); code != ExitOK {
		t.Fatalf("fast: exit %d", code)
	}
	time.Sleep(2 * quickAfter)
	select {
	case <-installed:
		t.Fatal("a quick command that ended at once installed the handler")
	default:
	}
	go func() {
		<-installed // only then: before, SIGINT would end the test binary
		syscall.Kill(syscall.Getpid(), syscall.SIGINT)
	}()
	code := Run(root, []string{"slow"}, s, noCode)
	if code != ExitInterrupted || !strings.Contains(errb.String(), "prog: interrupted") {
		t.Errorf("slow: exit %d, stderr %q", code, errb.String())
	}
}

// untilCanceled is an action that waits for its context's end, or ten
// seconds.
func untilCanceled(c *Context) error {
	select {
	case <-c.Context.Done():
		return c.Context.Err()
	case <-time.After(10 * time.Second):
		return nil
	}
}
