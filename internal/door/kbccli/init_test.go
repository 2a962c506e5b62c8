package kbccli

import (
	"io/fs"
	"regexp"
	"slices"
	"testing"

	"github.com/kbqdev/kbq/artifact"
	"github.com/kbqdev/kbq/compiler"
	"github.com/kbqdev/kbq/knowledge"
)

// The configuration kbc init writes is valid as it stands, and its
// commented-out settings, uncommented, are valid and are the defaults.
func TestScaffoldConfigShowsTheDefaults(t *testing.T) {
	data, err := fs.ReadFile(scaffold, "scaffold/config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if c := compiler.ParseConfig(data); len(c.Diagnostics) > 0 {
		t.Fatalf("as written: %v", c.Diagnostics)
	}
	setting := regexp.MustCompile(`(?m)^# ([a-z_]+:(?: |$)|  )`)
	uncommented := setting.ReplaceAll(data, []byte("$1"))
	c := compiler.ParseConfig(uncommented)
	if len(c.Diagnostics) > 0 {
		t.Fatalf("uncommented: %v\n%s", c.Diagnostics, uncommented)
	}
	if !slices.Equal(c.ContextFiles, knowledge.DefaultContextFiles) || c.MaxFileSize != compiler.DefaultMaxFileSize || c.Budgets != artifact.DefaultBudgets {
		t.Errorf("the settings shown are not the defaults: context files %v, size %d, budgets %+v", c.ContextFiles, c.MaxFileSize, c.Budgets)
	}
	if len(c.Ignore) != 1 || len(c.Secrets) != 2 {
		t.Errorf("the examples did not parse: ignore %v, secrets %+v", c.Ignore, c.Secrets)
	}
}
