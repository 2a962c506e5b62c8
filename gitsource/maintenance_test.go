package gitsource_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/kbqdev/kbq/gitsource"
)

// TestReadsSurviveMaintenance reads every file of a commit again and
// again, on several goroutines as a build does, while git gc, git repack -ad and git prune
// move its objects from loose files into packs and between packs.
func TestReadsSurviveMaintenance(t *testing.T) {
	if testing.Short() {
		t.Skip("runs git maintenance many times")
	}
	template := newRepo(t)
	files := make(map[string]string)
	for i := range 600 {
		files[fmt.Sprintf(".kb/d%02d/t%03d.md", i%20, i)] = fmt.Sprintf("# Topic %d\n\nbody %d\n", i, i)
	}
	template.commit(files)
	maintenance := [][]string{
		{"gc", "--prune=now", "--quiet"},
		{"repack", "-a", "-d", "-q"},
		{"prune"},
		{"repack", "-a", "-d", "-f", "-q"},
	}
	for round := range 4 {
		dir := filepath.Join(t.TempDir(), "repo")
		if out, err := exec.Command("cp", "-r", template.dir, dir).CombinedOutput(); err != nil {
			t.Fatalf("copy repository: %v\n%s", err, out)
		}
		if round%2 == 1 {
			// Start from one pack, so that repacking replaces packs.
			git(t, dir, "repack", "-a", "-d", "-q")
		}
		repo, err := gitsource.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		snap, err := repo.Rev("HEAD")
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			for _, args := range maintenance {
				git(t, dir, args...)
			}
		}()
		// Read everything again and again, as a long build would, until
		// the maintenance is over, and once more after.
		for reads, over := 0, false; !over; reads++ {
			select {
			case <-done:
				over = true
			default:
			}
			got := readAll(t, snap, 4)
			if len(got) != len(files) {
				t.Fatalf("round %d, read %d: %d files, want %d", round, reads, len(got), len(files))
			}
			for p, want := range files {
				if got[p] != want {
					t.Fatalf("round %d, read %d: %s is %q, want %q", round, reads, p, got[p], want)
				}
			}
		}
	}
}

// TestMissingObjectNamed checks that an object that is really missing is
// reported as such, naming it and the path that needs it.
func TestMissingObjectNamed(t *testing.T) {
	r := newRepo(t)
	r.commit(map[string]string{".kb/a.md": "a"})
	blob := r.git("rev-parse", "HEAD:.kb/a.md")
	os.Remove(filepath.Join(r.dir, ".git", "objects", blob[:2], blob[2:]))
	snap, err := r.open().Rev("HEAD")
	if err != nil {
		t.Fatal(err)
	}
	files := list(t, snap)
	_, err = snap.Read(files[".kb/a.md"], 1<<20)
	if !errors.Is(err, gitsource.ErrDamaged) || !strings.Contains(err.Error(), "blob "+blob+" of .kb/a.md is missing") {
		t.Errorf("read of a missing blob: %v", err)
	}

	// A damaged commit is damage, not an unknown revision.
	head := r.git("rev-parse", "HEAD")
	name := filepath.Join(r.dir, ".git", "objects", head[:2], head[2:])
	os.Chmod(name, 0o644)
	if err := os.WriteFile(name, []byte("garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = r.open().Rev("HEAD")
	if !errors.Is(err, gitsource.ErrDamaged) || errors.Is(err, gitsource.ErrUnknownRevision) || !strings.Contains(err.Error(), head) {
		t.Errorf("build of a corrupt HEAD commit: %v", err)
	}
	os.Remove(name)
	_, err = r.open().Rev("HEAD")
	if !errors.Is(err, gitsource.ErrDamaged) || !strings.Contains(err.Error(), "commit "+head+" of HEAD is missing") {
		t.Errorf("build of a missing HEAD commit: %v", err)
	}
}

// readAll reads every file of snap with n goroutines.
func readAll(t *testing.T, snap gitsource.Snapshot, n int) map[string]string {
	t.Helper()
	var all []gitsource.File
	for f, err := range snap.Files() {
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, f)
	}
	var mu sync.Mutex
	out := make(map[string]string, len(all))
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for w := range n {
		wg.Go(func() {
			for i := w; i < len(all); i += n {
				data, err := snap.Read(all[i], 1<<20)
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				out[all[i].Path] = string(data)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	return out
}

func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("git %v: %v\n%s", args, err, out)
	}
}
