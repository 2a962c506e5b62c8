//go:build unix

package plainread

import (
	"errors"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// A named pipe where a file was listed is refused at once, not waited on
// for a writer.
func TestReadFileRefusesANamedPipe(t *testing.T) {
	name := filepath.Join(t.TempDir(), "pipe.md")
	if err := unix.Mkfifo(name, 0o644); err != nil {
		t.Skipf("no named pipes here: %v", err)
	}
	if data, err := ReadFile(name, 0); !errors.Is(err, errNotRegular) {
		t.Errorf("ReadFile of a named pipe: %q, %v; want errNotRegular", data, err)
	}
}
