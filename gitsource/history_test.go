package gitsource_test

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestHistoryAgreesWithGit compares History with git log --first-parent
// over a generated history of additions, edits, renames, deletions, a
// file turned into a directory, and merges that change files.
func TestHistoryAgreesWithGit(t *testing.T) {
	r := newRepo(t)
	rng := rand.New(rand.NewPCG(7, 36))
	files := map[string]bool{}
	step := func(i int) {
		switch op := rng.IntN(4); {
		case op == 0 || len(files) < 3:
			p := fmt.Sprintf("d%d/sub%d/f%d.go", rng.IntN(3), rng.IntN(2), i)
			r.write(p, fmt.Sprint(i))
			files[p] = true
		case op == 1:
			p := slices.Sorted(maps.Keys(files))[rng.IntN(len(files))]
			r.write(p, fmt.Sprint("edit ", i))
		case op == 2:
			p := slices.Sorted(maps.Keys(files))[rng.IntN(len(files))]
			to := fmt.Sprintf("moved/m%d.go", i)
			if err := os.MkdirAll(filepath.Join(r.dir, "moved"), 0o755); err != nil {
				t.Fatal(err)
			}
			r.git("mv", p, to)
			delete(files, p)
			files[to] = true
		default:
			p := slices.Sorted(maps.Keys(files))[rng.IntN(len(files))]
			r.git("rm", "-q", p)
			delete(files, p)
		}
		r.git("add", "-A")
		r.git("commit", "-q", "--allow-empty", "-m", fmt.Sprint("step ", i))
	}
	for i := range 20 {
		step(i)
	}
	// A path that is a file, then a directory.
	r.write("x", "file")
	r.git("add", "-A")
	r.git("commit", "-q", "-m", "x file")
	r.git("rm", "-q", "x")
	r.write("x/y.go", "now a directory")
	r.git("add", "-A")
	r.git("commit", "-q", "-m", "x dir")
	// A branch merged with a change of its own in the merge commit.
	r.git("checkout", "-q", "-b", "side")
	for i := 20; i < 25; i++ {
		step(i)
	}
	r.git("checkout", "-q", "main")
	r.write("main-only.go", "main moves on")
	r.git("add", "-A")
	r.git("commit", "-q", "-m", "main moves on")
	r.git("merge", "-q", "--no-ff", "--no-commit", "side")
	r.write("merge-only.go", "changed in the merge")
	r.git("add", "-A")
	r.git("commit", "-q", "-m", "merge side")

	// What git says each first-parent commit changed from its first parent.
	var want strings.Builder
	hashes := strings.Fields(r.git("rev-list", "--first-parent", "HEAD"))
	for i, h := range hashes {
		args := []string{"diff-tree", "-r", "--no-renames", "--name-status", "--no-commit-id"}
		if i == len(hashes)-1 {
			args = append(args, "--root", h)
		} else {
			args = append(args, h+"^1", h)
		}
		lines := strings.Split(r.git(args...), "\n")
		if lines[0] == "" {
			lines = nil
		}
		slices.SortFunc(lines, byPath)
		fmt.Fprintf(&want, "@%s %s\n%s\n", h, r.git("log", "-1", "--format=%s", h), strings.Join(lines, "\n"))
	}
	var got strings.Builder
	for c, err := range r.open().History("HEAD") {
		if err != nil {
			t.Fatal(err)
		}
		var lines []string
		for _, p := range c.Changed {
			status := "M"
			switch {
			case c.Added[p]:
				status = "A"
			case c.Deleted[p]:
				status = "D"
			}
			lines = append(lines, status+"\t"+p)
		}
		slices.SortFunc(lines, byPath)
		fmt.Fprintf(&got, "@%s %s\n%s\n", c.Hash, c.Subject, strings.Join(lines, "\n"))
	}
	if got.String() != want.String() {
		t.Errorf("History disagrees with git:\n got:\n%s\nwant:\n%s", got.String(), want.String())
	}
	if !strings.Contains(want.String(), "merge-only.go") || !strings.Contains(want.String(), "D\tx\n") {
		t.Fatalf("the generated history lacks the cases it is for:\n%s", want.String())
	}
}

func byPath(a, b string) int {
	_, pa, _ := strings.Cut(a, "\t")
	_, pb, _ := strings.Cut(b, "\t")
	return strings.Compare(pa, pb)
}
