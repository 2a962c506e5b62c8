package cmd_test

import (
	"bytes"
	"os"
	"testing"
)

// TestOneProfile keeps the two binaries' build profiles one profile:
// go build compiles a package once for each profile it is built with, so
// two different files would compile every package kbc and kbq share
// twice. bench/pgo.sh writes both.
func TestOneProfile(t *testing.T) {
	kbc, err := os.ReadFile("kbc/default.pgo")
	if err != nil {
		t.Fatal(err)
	}
	kbq, err := os.ReadFile("kbq/default.pgo")
	if err != nil {
		t.Fatal(err)
	}
	if len(kbc) == 0 {
		t.Fatal("cmd/kbc/default.pgo is empty: write it with bench/pgo.sh")
	}
	if !bytes.Equal(kbc, kbq) {
		t.Error("cmd/kbc/default.pgo and cmd/kbq/default.pgo differ: write both with bench/pgo.sh")
	}
}
