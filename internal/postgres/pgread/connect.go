package pgread

import (
	"context"
	"errors"
	"fmt"
	"net"
	neturl "net/url"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

var (
	// ErrNoDatabase means no database was named.
	ErrNoDatabase = errors.New("no database: give --db URL, or set KBQ_DATABASE_URL (or libpq's PGHOST and PGDATABASE)")
	// ErrBadURL means the database's URL does not parse.
	ErrBadURL = errors.New("the database URL does not parse")
)

// Config reads where the database is: flag (--db), else
// $KBQ_DATABASE_URL, else libpq's variables.
func Config(flag string, getenv func(string) string) (*pgx.ConnConfig, error) {
	url := flag
	if url == "" {
		url = getenv("KBQ_DATABASE_URL")
	}
	if url == "" && getenv("PGHOST") == "" && getenv("PGDATABASE") == "" && getenv("PGSERVICE") == "" {
		return nil, ErrNoDatabase
	}
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadURL, scrub(Redact(err), url))
	}
	return cfg, nil
}

// Connect connects, saying plainly what went wrong.
func Connect(ctx context.Context, cfg *pgx.ConnConfig) (*pgx.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, connectError(err, cfg)
	}
	return conn, nil
}

// connectError explains a failed connection without the password.
func connectError(err error, cfg *pgx.ConnConfig) error {
	var pgErr *pgconn.PgError
	var netErr net.Error
	switch {
	case errors.As(err, &pgErr) && pgErr.Code == "28P01", errors.As(err, &pgErr) && pgErr.Code == "28000":
		return fmt.Errorf("authentication failed for user %s at %s: check the user and password (PGPASSWORD, ~/.pgpass)", cfg.User, Where(cfg))
	case errors.As(err, &pgErr) && pgErr.Code == "3D000":
		return fmt.Errorf("database %s does not exist at %s: create it, or name another with --db", cfg.Database, Where(cfg))
	case errors.As(err, &netErr), strings.Contains(err.Error(), "connect:"), strings.Contains(err.Error(), "dial"):
		return fmt.Errorf("cannot reach the database at %s: is it running, and is --db right? (%v)", Where(cfg), Redact(err))
	}
	return fmt.Errorf("connect to %s: %v", Where(cfg), Redact(err))
}

// Where names a database without its password: user@host:port/database.
func Where(cfg *pgx.ConnConfig) string {
	return fmt.Sprintf("%s@%s:%d/%s", cfg.User, cfg.Host, cfg.Port, cfg.Database)
}

// Redact drops a password an error may quote.
func Redact(err error) string {
	msg := err.Error()
	if i := strings.Index(msg, "password="); i >= 0 {
		end := strings.IndexAny(msg[i:], " &")
		if end < 0 {
			end = len(msg) - i
		}
		msg = msg[:i] + "password=…" + msg[i+end:]
	}
	return msg
}

// passwordParam is a password in a URL's query or a keyword/value string,
// compiled when a message is first scrubbed: every kbq process links this
// package, and compiling at start-up cost each one.
var passwordParam = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)(?:ssl)?password=('(?:\\.|[^'])*'|[^\s&]*)`)
})

// scrub removes from msg every password that raw, a database URL or
// keyword/value string, holds, whatever the parser that failed on it
// quoted: a URL that does not parse is never echoed with its password.
func scrub(msg, raw string) string {
	var secrets []string
	if _, rest, ok := strings.Cut(raw, "://"); ok {
		if at := strings.LastIndex(rest, "@"); at >= 0 {
			if _, pw, ok := strings.Cut(rest[:at], ":"); ok {
				secrets = append(secrets, pw)
				if dec, err := neturl.PathUnescape(pw); err == nil {
					secrets = append(secrets, dec)
				}
			}
		}
	}
	for _, m := range passwordParam().FindAllStringSubmatch(raw, -1) {
		secrets = append(secrets, strings.Trim(m[1], "'"))
	}
	for _, s := range secrets {
		if len(s) >= 3 {
			msg = strings.ReplaceAll(msg, s, "…")
		}
	}
	return msg
}
