package pgtest

import (
	"context"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"
)

func TestMain(m *testing.M) {
	code := m.Run()
	Stop()
	os.Exit(code)
}

func TestServerStarts(t *testing.T) {
	url := DB(t)
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var v string
	if err := conn.QueryRow(context.Background(), "SHOW server_version").Scan(&v); err != nil || v == "" {
		t.Fatalf("server_version %q, %v", v, err)
	}
	if DB(t) == url {
		t.Error("two tests share a database")
	}
}
