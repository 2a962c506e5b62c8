package kbqcli

import (
	"os"
	"testing"

	"github.com/kbqdev/kbq/internal/postgres/pgtest"
)

// TestMain stops the PostgreSQL server the database tests start.
func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.Stop()
	os.Exit(code)
}
