// Package testreq decides what a test does when a real part it needs is
// missing: PostgreSQL, PGlite, node, git, the embedding model, the shared
// corpora or SciFact. A developer's plain go test skips it, saying what is
// missing; under KBQ_TEST_REQUIRE (a list such as "postgres,model", or
// "all", which .ci/run sets), the test fails instead, so a broken CI setup
// cannot pass green.
package testreq

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// The parts a test may need.
const (
	Postgres = "postgres"
	PGlite   = "pglite"
	Node     = "node"
	Git      = "git"
	Model    = "model"
	Corpora  = "corpora"
	SciFact  = "scifact"
	Tools    = "tools" // other programs a test runs (bash, actionlint)
)

// Required reports whether KBQ_TEST_REQUIRE requires part.
func Required(part string) bool {
	for _, p := range strings.Split(os.Getenv("KBQ_TEST_REQUIRE"), ",") {
		if p = strings.TrimSpace(p); p == "all" || p == part {
			return true
		}
	}
	return false
}

// Skip skips t because part is missing, as why says, or fails it when
// part is required.
func Skip(t testing.TB, part string, why ...any) {
	t.Helper()
	if Required(part) {
		t.Fatal(append([]any{"KBQ_TEST_REQUIRE needs " + part + ", which is missing:"}, why...)...)
	}
	t.Skip(why...)
}

// Skipf is Skip with a format.
func Skipf(t testing.TB, part, format string, args ...any) {
	t.Helper()
	if Required(part) {
		t.Fatalf("KBQ_TEST_REQUIRE needs "+part+", which is missing: "+format, args...)
	}
	t.Skipf(format, args...)
}

// Parts are the parts a test may need, for documentation and checks.
var Parts = []string{Postgres, PGlite, Node, Git, Model, Corpora, SciFact, Tools}

// known reports whether part is one of Parts.
func known(part string) bool { return slices.Contains(Parts, part) }
