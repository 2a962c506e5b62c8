package safefs

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestNoLinksBelow(t *testing.T) {
	root := t.TempDir()
	elsewhere := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(root, "a", "b"), 0o755))
	must(t, os.Symlink(elsewhere, filepath.Join(root, "a", "link")))
	for _, tc := range []struct {
		path string
		link string // "" when the path is safe
	}{
		{filepath.Join(root, "a", "b"), ""},
		{filepath.Join(root, "a", "b", "new", "deeper"), ""},
		{filepath.Join(root, "a", "link"), filepath.Join(root, "a", "link")},
		{filepath.Join(root, "a", "link", "out"), filepath.Join(root, "a", "link")},
		{filepath.Join(elsewhere, "x"), ""},
	} {
		err := NoLinksBelow(root, tc.path)
		var le *LinkError
		switch {
		case tc.link == "" && err != nil:
			t.Errorf("NoLinksBelow(%s) = %v, want nil", tc.path, err)
		case tc.link != "" && (!errors.As(err, &le) || le.Path != tc.link || le.Target != elsewhere || !errors.Is(err, ErrLink)):
			t.Errorf("NoLinksBelow(%s) = %v, want the link %s", tc.path, err, tc.link)
		}
	}
}

func TestCreateReplacesWhatever(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(t.TempDir(), "victim")
	must(t, os.WriteFile(victim, []byte("keep"), 0o644))
	name := filepath.Join(dir, "file.tmp")
	for _, plant := range []func(){
		func() { must(t, os.Symlink(victim, name)) },
		func() { must(t, os.Symlink(victim+"-dangling", name)) },
		func() { must(t, os.WriteFile(name, []byte("stale"), 0o644)) },
		func() { must(t, os.MkdirAll(filepath.Join(name, "sub"), 0o755)) },
	} {
		plant()
		must(t, WriteFile(name, []byte("new"), 0o644))
		if b, _ := os.ReadFile(name); string(b) != "new" {
			t.Fatalf("file holds %q", b)
		}
		if b, _ := os.ReadFile(victim); string(b) != "keep" {
			t.Fatalf("written through a link: victim holds %q", b)
		}
		if _, err := os.Lstat(victim + "-dangling"); err == nil {
			t.Fatal("a dangling link's target was created")
		}
		must(t, os.RemoveAll(name))
	}
}

func TestOpenFileRefusesLink(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	name := filepath.Join(dir, "lock")
	must(t, os.Symlink(victim, name))
	_, err := OpenFile(name, os.O_CREATE|os.O_RDWR, 0o644)
	if !errors.Is(err, ErrLink) {
		t.Fatalf("OpenFile through a link = %v, want ErrLink", err)
	}
	if _, err := os.Lstat(victim); err == nil {
		t.Fatal("the link's target was created")
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// Replace puts the new content in place whole, with its mode, replacing a
// link at the name rather than writing through it, and leaves no
// temporary file behind.
func TestReplace(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(t.TempDir(), "victim")
	must(t, os.WriteFile(victim, []byte("keep"), 0o644))
	name := filepath.Join(dir, "out")
	must(t, os.Symlink(victim, name))
	must(t, Replace(name, []byte("new"), 0o444))
	if b, _ := os.ReadFile(name); string(b) != "new" {
		t.Fatalf("file holds %q", b)
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep" {
		t.Fatalf("written through a link: victim holds %q", b)
	}
	if fi, err := os.Lstat(name); err != nil || fi.Mode() != 0o444 {
		t.Fatalf("mode %v (%v), want -r--r--r--", fi.Mode(), err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("%d entries in the directory, want the file alone", len(entries))
	}
}
