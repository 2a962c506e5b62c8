package compiler

import (
	"bytes"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// A synced file written in pieces, some of them larger than what is
// written back at a time, holds what was written.
func TestWriteFileSyncWritesBack(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	want := make([]byte, 2*writeBackBytes+12345)
	for i := range want {
		want[i] = byte(r.Uint32())
	}
	name := filepath.Join(t.TempDir(), "f")
	err := writeFileSync(name, func(w io.Writer) error {
		for rest := want; len(rest) > 0; {
			n := min(len(rest), 1+r.IntN(writeBackBytes+writeBackBytes/2))
			if _, err := w.Write(rest[:n]); err != nil {
				return err
			}
			rest = rest[n:]
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("read %d bytes back, not the %d written", len(got), len(want))
	}
}
