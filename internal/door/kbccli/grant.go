package kbccli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"text/tabwriter"

	"github.com/jackc/pgx/v5"

	"github.com/kbqdev/kbq/internal/cli"
	"github.com/kbqdev/kbq/internal/postgres/pgread"
	"github.com/kbqdev/kbq/internal/postgres/pgstore"
	"github.com/kbqdev/kbq/internal/visible"
)

func newGrantCommand(s *cli.Streams) *cli.Command {
	var db string
	var asJSON bool
	dbFlag := &cli.StringFlag{Name: "db", Usage: "the database `URL` (default: $KBQ_DATABASE_URL, else libpq's PG* variables)", Destination: &db}
	// withConn runs fn on a session of the database.
	withConn := func(ctx context.Context, fn func(*pgx.Conn, *pgx.ConnConfig) error) error {
		cfg, err := pgread.Config(db, s.Getenv)
		if err != nil {
			return cli.Usagef("%v", err)
		}
		conn, err := pgread.Connect(ctx, cfg)
		if err != nil {
			return err
		}
		defer conn.Close(context.Background())
		if err := fn(conn, cfg); err != nil {
			if errors.Is(err, pgstore.ErrGrant) {
				return cli.Usagef("%v", err)
			}
			return publishError(err, cfg)
		}
		return nil
	}
	grantArgs := func(c *cli.Context, verb string) (pgstore.Grant, error) {
		if c.NArg() != 2 {
			return pgstore.Grant{}, cli.Usagef("kbc grant %s takes PRINCIPAL PATTERN, such as user:ada 'github.com/acme/*'", verb)
		}
		g := pgstore.Grant{Principal: c.Args().Get(0), Pattern: c.Args().Get(1)}
		if err := pgstore.CheckGrant(g); err != nil {
			return g, cli.Usagef("%v", err)
		}
		return g, nil
	}
	return &cli.Command{
		Name:      "grant",
		Usage:     "say who may read which published repositories",
		UsageText: "kbc grant add|rm PRINCIPAL PATTERN [--db URL]\n   kbc grant list [--db URL]",
		Description: `Grants let principals read the private repositories of the database kbc
publish writes; public and internal ones are read by everyone let in. kbq
serve enforces them for its callers, and PostgreSQL, by row-level
security, for database roles reading the tables with plain SQL or kbq
--db. Every door reads the same grants, kept in the database.

A principal is user:NAME (a caller kbq serve identifies: by an OIDC token's
subject or claim, or a token of --tokens), group:NAME (a group such a
caller is in) or role:PGROLE (a database role). A pattern is a repository
name, or one with * standing for any run of characters:
github.com/acme/* or * for every repository.

EXAMPLES:
   kbc grant add group:platform 'github.com/acme/*'
   kbc grant add role:reporting github.com/acme/handbook
   kbc grant rm user:ada github.com/acme/secret
   kbc grant list --db postgres://kbq@db.internal/knowledge

` + exitCodesHelp,
		Commands: []*cli.Command{
			{
				Name: "add", Usage: "let PRINCIPAL read the repositories PATTERN names", UsageText: "kbc grant add PRINCIPAL PATTERN [--db URL]",
				Flags: []cli.Flag{dbFlag},
				Action: func(c *cli.Context) error {
					g, err := grantArgs(c, "add")
					if err != nil {
						return err
					}
					return withConn(c.Context, func(conn *pgx.Conn, cfg *pgx.ConnConfig) error {
						added, err := pgstore.AddGrant(c.Context, conn, g)
						if err == nil {
							say := map[bool]string{true: "granted", false: "already granted"}[added]
							fmt.Fprintf(s.Err, "kbc: %s: %s reads %s in %s\n", say, visible.Line(g.Principal), visible.Line(g.Pattern), pgread.Where(cfg))
						}
						return err
					})
				},
			},
			{
				Name: "rm", Usage: "remove a grant", UsageText: "kbc grant rm PRINCIPAL PATTERN [--db URL]",
				Flags: []cli.Flag{dbFlag},
				Action: func(c *cli.Context) error {
					g, err := grantArgs(c, "rm")
					if err != nil {
						return err
					}
					return withConn(c.Context, func(conn *pgx.Conn, cfg *pgx.ConnConfig) error {
						removed, err := pgstore.RemoveGrant(c.Context, conn, g)
						if err != nil {
							return err
						}
						if !removed {
							return cli.Usagef("no grant lets %s read %s in %s (kbc grant list shows them)", visible.Line(g.Principal), visible.Line(g.Pattern), pgread.Where(cfg))
						}
						fmt.Fprintf(s.Err, "kbc: removed: %s no longer reads %s by this grant\n", visible.Line(g.Principal), visible.Line(g.Pattern))
						return nil
					})
				},
			},
			{
				Name: "list", Usage: "list the grants", UsageText: "kbc grant list [--db URL] [--json]",
				Flags: []cli.Flag{dbFlag, &cli.BoolFlag{Name: "json", Usage: "print JSON", Destination: &asJSON}},
				Action: func(c *cli.Context) error {
					if c.Args().Present() {
						return cli.Usagef("kbc grant list takes no arguments")
					}
					return withConn(c.Context, func(conn *pgx.Conn, _ *pgx.ConnConfig) error {
						grants, err := pgstore.Grants(c.Context, conn)
						if err != nil {
							return err
						}
						if asJSON {
							enc := json.NewEncoder(s.Out)
							enc.SetIndent("", "  ")
							return enc.Encode(grants)
						}
						if len(grants) == 0 {
							fmt.Fprintln(s.Err, "kbc: no grants: private repositories are read by their publishers alone (kbc grant add PRINCIPAL PATTERN)")
							return nil
						}
						tw := tabwriter.NewWriter(s.Out, 0, 4, 2, ' ', 0)
						fmt.Fprintln(tw, "PRINCIPAL\tPATTERN")
						for _, g := range grants {
							fmt.Fprintf(tw, "%s\t%s\n", visible.Line(g.Principal), visible.Line(g.Pattern))
						}
						return tw.Flush()
					})
				},
			},
		},
	}
}
