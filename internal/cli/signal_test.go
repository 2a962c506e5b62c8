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
			select {
			case <-c.Context.Done():
				return c.Context.Err()
			case <-time.After(10 * time.Second):
				return nil
			}
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
