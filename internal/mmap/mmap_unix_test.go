//go:build unix

package mmap

import (
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// A named pipe is refused at once: opening it must not wait for a writer.
func TestMapRefusesPipes(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip(err)
	}
	done := make(chan error, 1)
	go func() {
		_, _, err := Map(fifo)
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Error("a named pipe was mapped")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("mapping a named pipe waits for a writer")
	}
}
