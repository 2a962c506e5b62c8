package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGeneratedIsCurrent: doctable_gen.go is what gendoctable writes from
// document.go, so a field added to Document without go generate fails.
func TestGeneratedIsCurrent(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "..", "document.go"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := generate(src)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join("..", "..", "doctable_gen.go"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("artifact/doctable_gen.go is stale: run go generate ./artifact")
	}
}

func TestUnknownTypeStops(t *testing.T) {
	src := []byte("package artifact\n\ntype Document struct {\n\tPath string\n\tWhen complex128\n}\n")
	_, err := generate(src)
	if err == nil || !strings.Contains(err.Error(), "When has type complex128") {
		t.Fatalf("err = %v", err)
	}
	src = []byte("package artifact\n\ntype Document struct {\n\tPath string\n\tWhen complex128 `store:\"ages\"`\n}\n")
	out, err := generate(src)
	if err != nil || !bytes.Contains(out, []byte("w.str(d.Path)")) || bytes.Contains(out, []byte("When")) {
		t.Fatalf("err = %v, out:\n%s", err, out)
	}
}
