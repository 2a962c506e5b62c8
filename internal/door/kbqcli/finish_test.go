package kbqcli

import (
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/kbqdev/kbq/internal/cli"
	"github.com/kbqdev/kbq/internal/testkb"
)

// A search in a process that exits next leaves the artifact's files
// mapped, for the exit to release; one whose process goes on (a test, or
// another caller of Main) unmaps them.
func TestSearchLeavesMappingsToTheExit(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc/self/maps")
	}
	for _, exits := range []bool{false, true} {
		dir := testkb.Build(t, testkb.Files{".kb/keys.md": "# Keys\n\nRotate the signing key yearly.\n"})
		var out, errs strings.Builder
		s := &cli.Streams{Out: &out, Err: &errs, Exits: exits,
			Getenv: func(k string) string { return map[string]string{"KBQ_USAGE": "off"}[k] }}
		if code := Main([]string{"search", "--index", dir, "signing key"}, s); code != 0 || !strings.Contains(out.String(), "keys.md") {
			t.Fatalf("exit %d: %s%s", code, out.String(), errs.String())
		}
		maps, err := os.ReadFile("/proc/self/maps")
		if err != nil {
			t.Fatal(err)
		}
		if mapped := strings.Contains(string(maps), dir); mapped != exits {
			t.Errorf("a process that exits next: %v; the artifact still mapped: %v", exits, mapped)
		}
	}
}
