// Package pgtest starts a real PostgreSQL server for tests: initdb and
// pg_ctl (Debian's postgresql-15, found on PATH or in
// /usr/lib/postgresql/*/bin) in a temporary directory, on a free port,
// run as the postgres user when the tests run as root. One server serves
// a test binary; each test gets a database of its own. Tests skip, saying
// why, only when no server can be started.
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/kbqdev/kbq/internal/testreq"
)

var (
	once    sync.Once
	server  string // the admin URL, "" when none started
	why     string // why none started
	stop    func()
	counter atomic.Int64
)

// DB returns the URL of a new, empty database on the test server, as
// its owner (a superuser).
func DB(t testing.TB) string {
	t.Helper()
	url, err := NewDB()
	if errors.Is(err, ErrNoServer) {
		testreq.Skip(t, testreq.Postgres, err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return url
}

// ErrNoServer means no PostgreSQL server could be started.
var ErrNoServer = errors.New("no PostgreSQL server")

// NewDB is DB for callers without a testing.TB (test scripts).
func NewDB() (string, error) {
	once.Do(start)
	if server == "" {
		return "", fmt.Errorf("%w: %s", ErrNoServer, why)
	}
	name := fmt.Sprintf("kbq_test_%d_%d", os.Getpid(), counter.Add(1))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, server)
	if err != nil {
		return "", err
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		return "", err
	}
	return strings.Replace(server, "/postgres?", "/"+name+"?", 1), nil
}

// PasswordRole is the one role of the test server that must give its
// password.
const PasswordRole = "kbq_password"

// testPassword is PasswordRole's.
const testPassword = "right-horse-battery"

// PasswordURLs makes PasswordRole a reader of the database at url, which
// kbc publish has written into, and returns url as that role, with its
// password and with a wrong one.
func PasswordURLs(url string, grants []string) (right, wrong string, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return "", "", err
	}
	defer conn.Close(ctx)
	stmts := append([]string{
		`DO $$ BEGIN CREATE ROLE ` + PasswordRole + ` LOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END $$`,
		`ALTER ROLE ` + PasswordRole + ` PASSWORD '` + testPassword + `'`,
	}, grants...)
	for _, s := range stmts {
		if _, err := conn.Exec(ctx, s); err != nil {
			return "", "", err
		}
	}
	as := func(password string) string {
		return strings.Replace(url, "kbq@", PasswordRole+":"+password+"@", 1)
	}
	return as(testPassword), as("wrong-" + testPassword), nil
}

// Exec runs statements on the database at url.
func Exec(t testing.TB, url string, sql ...string) {
	t.Helper()
	for _, s := range sql {
		exec1(t, url, s)
	}
}

func exec1(t testing.TB, url, sql string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, sql); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// Stop stops the server; call it from TestMain after the tests.
func Stop() {
	if stop != nil {
		stop()
	}
}

// Main runs a package's tests and then stops the server they started:
// the TestMain of a package whose tests call DB.
func Main(m *testing.M) {
	code := m.Run()
	Stop()
	os.Exit(code)
}

// bin finds a PostgreSQL program.
func bin(name string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin/" + name)
	if len(matches) > 0 {
		return matches[len(matches)-1], nil
	}
	return "", fmt.Errorf("%s is not installed (apt-get install postgresql-15)", name)
}

func start() {
	initdb, err := bin("initdb")
	if err != nil {
		why = err.Error()
		return
	}
	pgctl, err := bin("pg_ctl")
	if err != nil {
		why = err.Error()
		return
	}
	dir, err := os.MkdirTemp("", "kbq-pg-")
	if err != nil {
		why = err.Error()
		return
	}
	// As root, the server runs as postgres, which must own its directory.
	var as []string
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			why = "running as root, and there is no postgres user to run the server as"
			return
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		os.Chown(dir, uid, gid)
		as = []string{"runuser", "-u", "postgres", "--"}
	}
	run := func(args ...string) error {
		cmd := exec.Command(args[0], args[1:]...)
		if len(as) > 0 {
			cmd = exec.Command(as[0], append(as[1:], args...)...)
		}
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("%s: %v: %s", filepath.Base(args[0]), err, strings.TrimSpace(string(out)))
		}
		return nil
	}
	data := filepath.Join(dir, "data")
	if err := run(initdb, "-D", data, "-U", "kbq", "-A", "trust", "-E", "UTF8", "--no-sync"); err != nil {
		why = err.Error()
		return
	}
	// One role must give its password, so that a wrong one can be tried
	// (PasswordURLs); every other connection is trusted.
	hba := filepath.Join(data, "pg_hba.conf")
	trusted, err := os.ReadFile(hba)
	if err == nil {
		err = os.WriteFile(hba, append([]byte("host all "+PasswordRole+" 127.0.0.1/32 scram-sha-256\n"), trusted...), 0o600)
	}
	if err != nil {
		why = err.Error()
		return
	}
	port, err := freePort()
	if err != nil {
		why = err.Error()
		return
	}
	opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off -c max_connections=50", port, dir)
	if err := run(pgctl, "-D", data, "-o", opts, "-l", filepath.Join(dir, "log"), "-w", "-t", "30", "start"); err != nil {
		why = err.Error()
		os.RemoveAll(dir)
		return
	}
	server = fmt.Sprintf("postgres://kbq@127.0.0.1:%d/postgres?sslmode=disable", port)
	stop = func() {
		run(pgctl, "-D", data, "-m", "immediate", "-w", "stop")
		os.RemoveAll(dir)
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// PGlite starts PGlite, PostgreSQL in WebAssembly with the pgvector
// extension, behind @electric-sql/pglite-socket, and returns its URL,
// which speaks the simple query protocol only (PGlite takes one session,
// no COPY and simple queries). The node modules are looked for in
// $KBQ_PGLITE_DIR (.ci/run installs them there); the test skips without
// them or without node.
func PGlite(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("KBQ_PGLITE_DIR")
	if dir == "" {
		testreq.Skip(t, testreq.PGlite, "no PGlite: set KBQ_PGLITE_DIR to a directory holding @electric-sql/pglite, pglite-socket and pglite-pgvector in node_modules (.ci/run does)")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		testreq.Skip(t, testreq.Node, "no PGlite: node is not installed")
	}
	script := filepath.Join(dir, "kbq-pglite-server.mjs")
	const server = `import { PGlite } from '@electric-sql/pglite'
import { vector } from '@electric-sql/pglite-pgvector'
import { PGLiteSocketServer } from '@electric-sql/pglite-socket'
const db = await PGlite.create({ extensions: { vector } })
const server = new PGLiteSocketServer({ db, port: Number(process.argv[2]), host: '127.0.0.1' })
await server.start()
console.log('listening')
`
	if err := os.WriteFile(script, []byte(server), 0o644); err != nil {
		t.Fatal(err)
	}
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, script, strconv.Itoa(port))
	cmd.Dir = dir
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	ready := make(chan error, 1)
	go func() {
		buf := make([]byte, 64)
		n, err := out.Read(buf)
		if err == nil && !strings.Contains(string(buf[:n]), "listening") {
			err = fmt.Errorf("PGlite said %q", buf[:n])
		}
		ready <- err
	}()
	select {
	case err := <-ready:
		if err != nil {
			t.Fatalf("PGlite did not start: %v", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("PGlite did not start in 60 s")
	}
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable&default_query_exec_mode=simple_protocol", port)
}

// Connect connects to url until the test ends.
func Connect(t testing.TB, url string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// Role names a role of the database at url (roles are the server's, and
// the tests' databases share it): kbq_NAME_DATABASE.
func Role(url, name string) string {
	return "kbq_" + name + "_" + url[strings.LastIndex(url, "/")+1:strings.Index(url, "?")]
}
