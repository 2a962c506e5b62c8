package cmd_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

const mod = "github.com/kbqdev/kbq/"

// layerRules are the import rules between the layers of the house: a
// package (and everything it imports) never depends on what a rule bans.
// A ban is a package path, or a prefix of paths ending in "/".
var layerRules = []struct {
	pkg, why string
	banned   []string
}{
	// kbq must stay small and read-only: no go-git, no compiler, no
	// publisher, no markdown parser (its initialization costs every
	// process 0.4 ms), no ice (artifact/iceread reads its segments) and
	// so no snappy, whose CRC table cost every process 0.2 ms.
	{mod + "cmd/kbq", "kbq links no writer", []string{
		"github.com/go-git/", mod + "compiler", mod + "gitsource", mod + "internal/postgres/pgstore", "github.com/yuin/goldmark/",
		"github.com/blugelabs/ice", "github.com/golang/snappy",
	}},
	// The query side never imports the compiler or git.
	{mod + "query/...", "the query side reads artifacts only", []string{mod + "compiler", mod + "gitsource", "github.com/go-git/"}},
	{mod + "internal/postgres/pgread", "kbq --db reads artifacts only", []string{mod + "compiler", mod + "gitsource", mod + "internal/postgres/pgstore"}},
	// The format is below the engine that reads it.
	{mod + "artifact/...", "the format is below the engine", []string{mod + "query", mod + "compiler"}},
	// No import runs back up from the core into the front doors
	// (internal/door), nor from a helper of internal/ into the doors or
	// PostgreSQL (internal/postgres).
	{mod + "query/...", "the core never imports a front door", []string{mod + "internal/door/"}},
	{mod + "compiler/...", "the core never imports a front door", []string{mod + "internal/door/"}},
	{mod + "artifact/...", "the core never imports a front door", []string{mod + "internal/door/"}},
	{mod + "internal/cli", "a helper never imports a door", []string{mod + "internal/door/", mod + "internal/postgres/"}},
	{mod + "internal/usage", "a helper never imports a door", []string{mod + "internal/door/", mod + "internal/postgres/"}},
	{mod + "internal/trust", "a helper never imports a door", []string{mod + "internal/door/", mod + "internal/postgres/"}},
	// The two front doors of kbq, the command line and the servers, share
	// the floor under them; neither imports the other.
	{mod + "internal/door/kbqserve", "the front doors stand apart", []string{mod + "internal/door/kbqcli"}},
	{mod + "internal/door/kbqcli", "the front doors stand apart", []string{mod + "internal/door/kbqserve"}},
	// The read path is under both, and below the network they reach.
	{mod + "internal/door/reader", "the read path is under the doors", []string{mod + "internal/door/kbqcli", mod + "internal/door/kbqserve", mod + "internal/door/online"}},
}

// deps lists the packages pattern imports, itself included.
func deps(t *testing.T, pattern string) []string {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", pattern).CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps %s: %v: %s", pattern, err, out)
	}
	pkgs := strings.Fields(string(out))
	if len(pkgs) < 5 {
		t.Fatalf("go list printed %d packages for %s: %s", len(pkgs), pattern, out)
	}
	return pkgs
}

func TestLayerRules(t *testing.T) {
	// A ban names something that exists: a package of this module or a
	// module of the build, so that a rename cannot make a rule vacuous.
	out, err := exec.Command("go", "list", "-m", "all").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -m all: %v: %s", err, out)
	}
	modules := string(out)
	ours, err := exec.Command("go", "list", mod+"...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list %s...: %v: %s", mod, err, ours)
	}
	for _, r := range layerRules {
		for _, b := range r.banned {
			name := strings.TrimSuffix(b, "/")
			if !strings.Contains(modules, name) && !strings.Contains(string(ours), name) {
				t.Errorf("the rule %q bans %s, which is neither a module nor a package here", r.why, b)
			}
		}
	}
	for _, r := range layerRules {
		for _, d := range deps(t, r.pkg) {
			for _, b := range r.banned {
				if d == b || strings.HasSuffix(b, "/") && strings.HasPrefix(d, b) || strings.HasPrefix(d, b+"/") {
					t.Errorf("%s depends on %s: %s", r.pkg, d, r.why)
				}
			}
		}
	}
}

// TestReaderPrintsNothing keeps printing in the doors: the read path
// returns what a user should know, and each door says it its own way.
func TestReaderPrintsNothing(t *testing.T) {
	files, err := filepath.Glob("../internal/door/reader/*.go")
	if err != nil || len(files) < 3 {
		t.Fatalf("the reader's files: %v, %v", files, err)
	}
	printing := regexp.MustCompile(`\bfmt\.(Fprint|Print)|\bos\.(Stdout|Stderr)\b|\bcli\.Streams\b|\bprintln\(`)
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(src), "\n") {
			if printing.MatchString(line) {
				t.Errorf("%s:%d prints: %s", f, i+1, strings.TrimSpace(line))
			}
		}
	}
}
