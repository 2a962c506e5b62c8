// End-to-end tests of kbc and kbq: txtar scripts under testdata/script that
// create git repositories, commit knowledge, build and query it, and check
// outputs and exit codes. Run with -update to rewrite the expected output
// embedded in the scripts.
package cmd_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/rogpeppe/go-internal/testscript"

	"github.com/kbqdev/kbq/embedding/embeddingtest"
	"github.com/kbqdev/kbq/internal/cli"
	"github.com/kbqdev/kbq/internal/door/kbccli"
	"github.com/kbqdev/kbq/internal/door/kbqcli"
	"github.com/kbqdev/kbq/internal/door/kbqserve"
	"github.com/kbqdev/kbq/internal/postgres/pgstore"
	"github.com/kbqdev/kbq/internal/postgres/pgtest"
	"github.com/kbqdev/kbq/internal/testreq"
)

var update = flag.Bool("update", false, "rewrite the expected output in test scripts")

// stopping runs the tests, then stops the PostgreSQL server they started.
type stopping struct{ m *testing.M }

func (s stopping) Run() int {
	defer pgtest.Stop()
	return s.m.Run()
}

func TestMain(m *testing.M) {
	testscript.Main(stopping{m}, map[string]func(){
		"kbc": func() { os.Exit(kbccli.Main(os.Args[1:], cli.System())) },
		"kbq": func() {
			s := cli.System()
			os.Exit(kbqcli.Main(os.Args[1:], s, kbqserve.Commands(s)...))
		},
	})
}

func TestScripts(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		testreq.Skip(t, testreq.Git, "git is not installed")
	}
	testscript.Run(t, testscript.Params{
		Dir:           filepath.Join("testdata", "script"),
		UpdateScripts: *update,
		Setup: func(env *testscript.Env) error {
			home := filepath.Join(env.WorkDir, ".home")
			for k, v := range map[string]string{
				"HOME":                home,
				"XDG_CONFIG_HOME":     filepath.Join(home, ".config"),
				"XDG_STATE_HOME":      filepath.Join(home, ".local", "state"),
				"KBQ_USAGE":           "",
				"KBQ_USAGE_QUERIES":   "",
				"GIT_CONFIG_NOSYSTEM": "1",
				"GIT_AUTHOR_NAME":     "Ada",
				"GIT_AUTHOR_EMAIL":    "ada@example.com",
				"GIT_COMMITTER_NAME":  "Ada",
				"GIT_COMMITTER_EMAIL": "ada@example.com",
				"GIT_AUTHOR_DATE":     "2024-05-01T10:00:00Z",
				"GIT_COMMITTER_DATE":  "2024-05-01T10:00:00Z",
				"CI":                  "",
				"NO_COLOR":            "",
				"KBQ_INDEX":           "",
				"KBQ_HOME":            "",
				"SOURCE_DATE_EPOCH":   "",
				"KBQ_MODELS":          filepath.Join(home, "models"),
				"KBQ_DATABASE_URL":    "",
			} {
				env.Setenv(k, v)
			}
			return os.MkdirAll(home, 0o755)
		},
		Condition: func(cond string) (bool, error) {
			switch cond {
			case "root":
				return os.Geteuid() == 0, nil
			case "pg":
				// A PostgreSQL server can be started (pgdb makes a database).
				_, err := pgtest.NewDB()
				return err == nil, nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"cmpdir":      cmpdir,
			"tinymodel":   tinyModel,
			"embedserver": embedServer,
			"chatserver":  chatServer,
			"validutf8":   validUTF8,
			"maxbytes":    maxBytes,
			"maxlines":    maxLines,
			"exits":       exits,
			"pgdb":        pgdb,
			"pgpassword":  pgpassword,
			"pgwaitwrite": pgwaitwrite,
			"freeport":    freePort,
			"httpget":     httpGet,
		},
	})
}

// cmpdir compares two directory trees file by file: cmpdir DIR1 DIR2.
func cmpdir(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: cmpdir dir1 dir2")
	}
	a, b := ts.MkAbs(args[0]), ts.MkAbs(args[1])
	files := func(root string) map[string][]byte {
		out := make(map[string][]byte)
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			data, err := os.ReadFile(p)
			out[rel] = data
			return err
		})
		ts.Check(err)
		return out
	}
	fa, fb := files(a), files(b)
	var diff []string
	for name, data := range fa {
		if other, ok := fb[name]; !ok {
			diff = append(diff, name+" only in "+args[0])
		} else if !bytes.Equal(data, other) {
			diff = append(diff, name+" differs")
		}
	}
	for name := range fb {
		if _, ok := fa[name]; !ok {
			diff = append(diff, name+" only in "+args[1])
		}
	}
	if neg && len(diff) == 0 {
		ts.Fatalf("%s and %s are identical", args[0], args[1])
	}
	if !neg && len(diff) > 0 {
		ts.Fatalf("%s and %s differ: %v", args[0], args[1], diff)
	}
}

// validUTF8 checks that a file is valid UTF-8: validutf8 FILE.
func validUTF8(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: validutf8 file")
	}
	data, err := os.ReadFile(ts.MkAbs(args[0]))
	ts.Check(err)
	if utf8.Valid(data) == neg {
		ts.Fatalf("%s: valid UTF-8 is %v", args[0], utf8.Valid(data))
	}
}

// maxBytes checks a file's size: maxbytes FILE N.
func maxBytes(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: maxbytes file n")
	}
	fi, err := os.Stat(ts.MkAbs(args[0]))
	ts.Check(err)
	n, err := strconv.ParseInt(args[1], 10, 64)
	ts.Check(err)
	if (fi.Size() <= n) == neg {
		ts.Fatalf("%s is %d bytes; limit %d (negated: %v)", args[0], fi.Size(), n, neg)
	}
}

// maxLines checks that a file has at most n lines: maxlines file n.
func maxLines(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: maxlines file n")
	}
	data := ts.ReadFile(args[0])
	n, err := strconv.Atoi(args[1])
	ts.Check(err)
	if lines := strings.Count(data, "\n"); (lines <= n) == neg {
		ts.Fatalf("%s has %d lines; limit %d (negated: %v)", args[0], lines, n, neg)
	}
}

// exits runs a program, keeping its stdout and stderr for the commands
// that follow, and checks its exit code: exits N PROGRAM ARGS...
func exits(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 2 || neg {
		ts.Fatalf("usage: exits code program [args...]")
	}
	want, err := strconv.Atoi(args[0])
	ts.Check(err)
	code := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			ts.Fatalf("run %s: %v", args[1], err)
		}
		code = exit.ExitCode()
	}
	if code != want {
		ts.Fatalf("%s exited %d, want %d", strings.Join(args[1:], " "), code, want)
	}
}

// tinyModel writes a tiny BERT model to a directory: tinymodel DIR [SEED].
func tinyModel(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 || len(args) > 2 {
		ts.Fatalf("usage: tinymodel DIR [SEED]")
	}
	m := embeddingtest.Default
	if len(args) == 2 {
		seed, err := strconv.ParseUint(args[1], 10, 64)
		ts.Check(err)
		m.Seed = seed
	}
	ts.Check(m.Write(ts.MkAbs(args[0])))
}

// embedServer starts an OpenAI-compatible embeddings endpoint for the
// script, at $EMBED_URL/v1: a vector counts the words of a text, hashed
// into 16 dimensions. $EMBED_URL/auth/v1 wants the key "sekret";
// $EMBED_URL/broken/v1 answers one vector too few for more than one text.
// While $WORK/endpoint-down exists it answers 503 to everything. Every
// request's Authorization is appended to $WORK/auth.log.
func embedServer(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: embedserver")
	}
	authLog, down := ts.MkAbs("auth.log"), ts.MkAbs("endpoint-down")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		logAuth(authLog, r)
		if _, err := os.Stat(down); err == nil {
			http.Error(w, `{"error":{"message":"overloaded"}}`, http.StatusServiceUnavailable)
			return
		}
		if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/v1/embeddings") {
			http.NotFound(w, r)
			return
		}
		if strings.HasPrefix(r.URL.Path, "/auth/") && r.Header.Get("Authorization") != "Bearer sekret" {
			http.Error(w, `{"error":{"message":"invalid api key"}}`, http.StatusUnauthorized)
			return
		}
		var req struct {
			Model string   `json:"model"`
			Input []string `json:"input"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Model != "fake-words" {
			http.Error(w, `{"error":"model not found"}`, http.StatusNotFound)
			return
		}
		type item struct {
			Index     int       `json:"index"`
			Embedding []float64 `json:"embedding"`
		}
		var resp struct {
			Data []item `json:"data"`
		}
		for i, text := range req.Input {
			v := make([]float64, 16)
			v[15] = 0.01
			for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) }) {
				h := fnv.New32a()
				h.Write([]byte(w))
				v[h.Sum32()%15]++
			}
			resp.Data = append(resp.Data, item{i, v})
		}
		if strings.HasPrefix(r.URL.Path, "/broken/") && len(resp.Data) > 1 {
			resp.Data = resp.Data[1:]
		}
		json.NewEncoder(w).Encode(resp)
	}))
	ts.Defer(srv.Close)
	ts.Setenv("EMBED_URL", srv.URL)
}

// logAuth appends a request's path and Authorization header to file: a
// test then checks which secrets left the process.
func logAuth(file string, r *http.Request) {
	f, err := os.OpenFile(file, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	fmt.Fprintf(f, "%s %s authorization=%q\n", r.Method, r.URL.Path, r.Header.Get("Authorization"))
}

// freePort sets the variable it names to a TCP port free on 127.0.0.1.
func freePort(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: freeport VAR")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	ts.Check(err)
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	ts.Setenv(args[0], strconv.Itoa(port))
}

// httpGet fetches a URL and writes its body to stdout, trying again for
// up to 20 s while nothing listens there yet; it fails unless the status
// is 200 (or, negated, unless it is not): httpget [-H NAME:VALUE]... URL.
func httpGet(ts *testscript.TestScript, neg bool, args []string) {
	var headers [][2]string
	for len(args) > 2 && args[0] == "-H" {
		name, value, _ := strings.Cut(args[1], ":")
		headers = append(headers, [2]string{name, strings.TrimSpace(value)})
		args = args[2:]
	}
	if len(args) != 1 {
		ts.Fatalf("usage: httpget [-H NAME:VALUE]... URL")
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		req, err := http.NewRequest(http.MethodGet, args[0], nil)
		ts.Check(err)
		for _, h := range headers {
			req.Header.Set(h[0], h[1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
			continue
		}
		ts.Check(err)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		ts.Stdout().Write(body)
		if ok := resp.StatusCode == http.StatusOK; ok == neg {
			ts.Fatalf("GET %s: %s\n%s", args[0], resp.Status, body)
		}
		return
	}
}

// chatServer starts a fake OpenAI-compatible chat endpoint and sets
// CHAT_URL to it. The path before /v1 chooses what it does: ok merges
// the notes it is sent, citing each by path; drop leaves the last out;
// 401, 429 and malformed answer so. Every request's body is appended to
// $WORK/chat-requests.log.
func chatServer(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: chatserver")
	}
	logPath := ts.MkAbs("chat-requests.log")
	noteRE := regexp.MustCompile(`(?m)^===== NOTE (\S+) \(`)
	authLog := ts.MkAbs("auth.log")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		logAuth(authLog, r)
		mode, rest, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
		if r.Method != http.MethodPost || rest != "v1/chat/completions" {
			http.NotFound(w, r)
			return
		}
		body, _ := io.ReadAll(r.Body)
		if f, err := os.OpenFile(logPath, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
			f.Write(append(body, '\n'))
			f.Close()
		}
		var req struct {
			Model    string `json:"model"`
			Messages []struct {
				Role, Content string
			} `json:"messages"`
		}
		if json.Unmarshal(body, &req) != nil || len(req.Messages) != 2 {
			http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
			return
		}
		switch mode {
		case "401":
			http.Error(w, `{"error":{"message":"invalid api key"}}`, http.StatusUnauthorized)
			return
		case "429":
			http.Error(w, `{"error":{"message":"rate limited"}}`, http.StatusTooManyRequests)
			return
		case "malformed":
			io.WriteString(w, `{"choices": "no"}`)
			return
		}
		paths := noteRE.FindAllStringSubmatch(req.Messages[1].Content, -1)
		if mode == "drop" && len(paths) > 0 {
			paths = paths[:len(paths)-1]
		}
		reply := "```markdown\n# What we know\n\n## Notes\n\n"
		for _, p := range paths {
			reply += fmt.Sprintf("- A fact from the note [%s].\n", p[1])
		}
		reply += "```"
		json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{
			"message": map[string]string{"role": "assistant", "content": reply}, "finish_reason": "stop"}}})
	}))
	ts.Defer(srv.Close)
	ts.Setenv("CHAT_URL", srv.URL)
}

// pgpassword makes the test server's password role a reader of the
// database of KBQ_DATABASE_URL, once kbc publish has written there, and
// sets PASSWORD_URL and WRONG_PASSWORD_URL to it as that role, with its
// password and with a wrong one: pgpassword.
func pgpassword(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: pgpassword")
	}
	right, wrong, err := pgtest.PasswordURLs(ts.Getenv("KBQ_DATABASE_URL"), pgstore.ReadOnlyGrants(pgtest.PasswordRole))
	ts.Check(err)
	ts.Setenv("PASSWORD_URL", right)
	ts.Setenv("WRONG_PASSWORD_URL", wrong)
}

// pgwaitwrite waits, up to a minute, until a session of the database of
// KBQ_DATABASE_URL is writing a publish's rows (a COPY into kbq_ tables)
// or computing its tsvectors: pgwaitwrite.
func pgwaitwrite(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: pgwaitwrite")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, ts.Getenv("KBQ_DATABASE_URL"))
	ts.Check(err)
	defer conn.Close(context.Background())
	for {
		var n int
		err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND state = 'active'
			AND pid <> pg_backend_pid() AND (query ILIKE 'copy "kbq_%' OR query ILIKE '%tsvectorsend%')`).Scan(&n)
		ts.Check(err)
		if n > 0 {
			return
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// pgdb makes an empty database on the test PostgreSQL server and sets
// KBQ_DATABASE_URL to it: pgdb.
func pgdb(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: pgdb")
	}
	url, err := pgtest.NewDB()
	ts.Check(err)
	ts.Setenv("KBQ_DATABASE_URL", url)
}
