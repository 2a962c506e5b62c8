package cmd_test

import (
	"os/exec"
	"strings"
	"testing"
)

// kbq must stay small: its dependency graph holds neither go-git nor the
// compiler, nor Bluge's search package with its costly initialization, nor
// Bluge's index package (its writers, ice v2 and zstd: 1 MB of binary).
func TestKbqDependencies(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/kbqdev/kbq/cmd/kbq").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v: %s", err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 20 {
		t.Fatalf("go list printed %d packages: %s", len(deps), out)
	}
	for _, d := range deps {
		for _, banned := range []string{
			"github.com/go-git/", "github.com/kbqdev/kbq/compiler", "github.com/kbqdev/kbq/gitsource",
			"github.com/yuin/goldmark", "github.com/blugelabs/bluge/search", "github.com/blugelabs/bluge/index",
			"github.com/blugelabs/ice/v2", "github.com/klauspost/compress",
		} {
			if strings.HasPrefix(d, banned) {
				t.Errorf("kbq depends on %s", d)
			}
		}
	}
}

// kbq's two front doors, the command line and the servers, share the floor
// under them (internal/answer); neither imports the other.
func TestFrontDoorsStandApart(t *testing.T) {
	for pkg, banned := range map[string]string{
		"github.com/kbqdev/kbq/internal/kbqserve": "github.com/kbqdev/kbq/internal/kbqcli",
		"github.com/kbqdev/kbq/internal/kbqcli":   "github.com/kbqdev/kbq/internal/kbqserve",
	} {
		out, err := exec.Command("go", "list", "-deps", pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list: %v: %s", err, out)
		}
		for _, d := range strings.Fields(string(out)) {
			if d == banned {
				t.Errorf("%s depends on %s", pkg, banned)
			}
		}
	}
}
