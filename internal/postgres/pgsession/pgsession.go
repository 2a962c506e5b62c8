// Package pgsession opens extra PostgreSQL sessions beside one already
// open, for work a server does faster in several sessions at once: kbc
// publish's tsvectors, kbq's fetch of large files.
package pgsession

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// Open opens up to n sessions like cfg's, side by side, each readied by
// setup when it is not nil, and returns those the server granted and
// setup readied: fewer, or none, where a connection limit or the server's
// own (one session, as PGlite's) stops them. Callers do the work in the
// sessions they get.
func Open(ctx context.Context, cfg *pgx.ConnConfig, n int, setup func(context.Context, *pgx.Conn) error) []*pgx.Conn {
	out := make(chan *pgx.Conn, n)
	for range n {
		go func() {
			c := cfg.Copy()
			c.ConnectTimeout = 5 * time.Second
			conn, err := pgx.ConnectConfig(ctx, c)
			if err == nil && setup != nil {
				if err = setup(ctx, conn); err != nil {
					conn.Close(context.Background())
				}
			}
			if err != nil {
				conn = nil
			}
			out <- conn
		}()
	}
	var conns []*pgx.Conn
	for range n {
		if c := <-out; c != nil {
			conns = append(conns, c)
		}
	}
	return conns
}

// Close closes conns.
func Close(conns []*pgx.Conn) {
	for _, c := range conns {
		c.Close(context.Background())
	}
}
