package kbqcli

import (
	"testing"

	"github.com/kbqdev/kbq/internal/postgres/pgtest"
)

// TestMain stops the PostgreSQL server the database tests start.
func TestMain(m *testing.M) { pgtest.Main(m) }
