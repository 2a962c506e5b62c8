package gitsource

import (
	"bytes"
	"crypto/sha1"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/go-git/go-git/v5/plumbing/format/index"

	"github.com/kbqdev/kbq/internal/testreq"
)

// gitIndex runs script in a new repository and returns its index file.
func gitIndex(t *testing.T, script ...[]string) []byte {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		testreq.Skip(t, testreq.Git, "git is not installed")
	}
	dir := t.TempDir()
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("HOME", t.TempDir())
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=A", "GIT_AUTHOR_EMAIL=a@b.c", "GIT_COMMITTER_NAME=A", "GIT_COMMITTER_EMAIL=a@b.c")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
	}
	run("git", "init", "-q", "-b", "main")
	for i := range 40 {
		name := filepath.Join(dir, fmt.Sprintf("d%d/sub/%s%d.md", i%3, string(rune('a'+i%26)), i))
		os.MkdirAll(filepath.Dir(name), 0o755)
		os.WriteFile(name, []byte(fmt.Sprint(i)), 0o644)
	}
	long := filepath.Join(dir, "long", string(bytes.Repeat([]byte("n"), 200)), string(bytes.Repeat([]byte("m"), 200))+".md")
	os.MkdirAll(filepath.Dir(long), 0o755)
	os.WriteFile(long, []byte("long"), 0o644)
	os.WriteFile(filepath.Join(dir, "run.sh"), []byte("#!/bin/sh\n"), 0o755)
	os.Symlink("run.sh", filepath.Join(dir, "link"))
	run("git", "add", "-A")
	run("git", "commit", "-q", "-m", "one")
	for _, s := range script {
		if s[0] == "write" {
			os.WriteFile(filepath.Join(dir, s[1]), []byte(s[2]), 0o644)
			continue
		}
		run(s...)
	}
	data, err := os.ReadFile(filepath.Join(dir, ".git", "index"))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestParseIndexMatchesGoGit(t *testing.T) {
	cases := map[string][][]string{
		"version 2 with a cache tree": nil,
		"cache tree invalidated":      {{"write", "d0/sub/a0.md", "changed"}, {"git", "add", "d0/sub/a0.md"}},
		"version 3: intent to add":    {{"write", "new.md", "new"}, {"git", "add", "-N", "new.md"}},
		"skip-worktree":               {{"git", "update-index", "--skip-worktree", "run.sh"}},
		"version 4":                   {{"git", "update-index", "--index-version", "4"}},
		"version 4, then a change":    {{"git", "update-index", "--index-version", "4"}, {"write", "d1/sub/b1.md", "x"}, {"git", "add", "-A"}},
		"merge conflict": {
			{"git", "checkout", "-q", "-b", "other"}, {"write", "run.sh", "other"}, {"git", "commit", "-qam", "other"},
			{"git", "checkout", "-q", "main"}, {"write", "run.sh", "main"}, {"git", "commit", "-qam", "main"},
			{"sh", "-c", "git merge -q other || true"},
		},
	}
	for name, script := range cases {
		t.Run(name, func(t *testing.T) {
			data := gitIndex(t, script...)
			want := &index.Index{}
			if err := index.NewDecoder(bytes.NewReader(data)).Decode(want); err != nil {
				t.Fatal(err)
			}
			got, err := parseIndex(data)
			if err != nil {
				t.Fatal(err)
			}
			if got.Version != want.Version || len(got.Entries) != len(want.Entries) {
				t.Fatalf("version %d, %d entries; go-git: version %d, %d entries", got.Version, len(got.Entries), want.Version, len(want.Entries))
			}
			for i := range want.Entries {
				if !reflect.DeepEqual(*got.Entries[i], *want.Entries[i]) {
					t.Errorf("entry %d:\n got %+v\nwant %+v", i, *got.Entries[i], *want.Entries[i])
				}
			}
			if !reflect.DeepEqual(got.Cache, want.Cache) {
				t.Errorf("cache tree:\n got %+v\nwant %+v", got.Cache, want.Cache)
			}
		})
	}
}

// Damaged or hostile index files are errors, never a panic or a huge
// allocation.
func TestParseIndexRejectsDamage(t *testing.T) {
	data := gitIndex(t)
	resum := func(b []byte) []byte {
		b = bytes.Clone(b)
		sum := sha1.Sum(b[:len(b)-sha1.Size])
		copy(b[len(b)-sha1.Size:], sum[:])
		return b
	}
	for cut := 0; cut < len(data); cut += 7 {
		if _, err := parseIndex(data[:cut]); err == nil {
			t.Fatalf("index cut at %d of %d bytes parsed", cut, len(data))
		}
		// With a valid checksum, only the structure can catch it.
		if cut > 12+sha1.Size {
			if _, err := parseIndex(resum(data[:cut])); err == nil {
				t.Fatalf("index cut at %d of %d bytes, checksum fixed, parsed", cut, len(data))
			}
		}
	}
	flipped := bytes.Clone(data)
	flipped[100] ^= 1
	if _, err := parseIndex(flipped); !errors.Is(err, index.ErrInvalidChecksum) {
		t.Errorf("a flipped bit: %v", err)
	}
	huge := bytes.Clone(data)
	copy(huge[8:], []byte{0x7f, 0xff, 0xff, 0xff}) // two billion entries
	if _, err := parseIndex(resum(huge)); err == nil {
		t.Error("an entry count past the end of the file parsed")
	}
	required := resum(append(bytes.Clone(data[:len(data)-sha1.Size]), append([]byte("link\x00\x00\x00\x00"), make([]byte, sha1.Size)...)...))
	if _, err := parseIndex(required); !errors.Is(err, index.ErrUnknownExtension) {
		t.Errorf("a required extension kbc does not know: %v", err)
	}
}

func TestOffsetVarint(t *testing.T) {
	// Encodings from git's varint.c: each continuation adds one.
	for _, c := range []struct {
		in   []byte
		want uint64
	}{
		{[]byte{0}, 0}, {[]byte{0x7f}, 127}, {[]byte{0x80, 0}, 128}, {[]byte{0x80, 0x7f}, 255},
		{[]byte{0xff, 0x7f}, 16511}, {[]byte{0x80, 0x80, 0}, 16512},
	} {
		if got, n := offsetVarint(c.in); got != c.want || n != len(c.in) {
			t.Errorf("offsetVarint(%x) = %d, %d bytes; want %d, %d", c.in, got, n, c.want, len(c.in))
		}
	}
	if _, n := offsetVarint([]byte{0x80, 0x80}); n != 0 {
		t.Error("an unterminated varint decoded")
	}
	if _, n := offsetVarint(bytes.Repeat([]byte{0xff}, 20)); n != 0 {
		t.Error("an overflowing varint decoded")
	}
}
