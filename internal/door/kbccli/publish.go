package kbccli

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/kbqdev/kbq/artifact"
	"github.com/kbqdev/kbq/internal/cli"
	"github.com/kbqdev/kbq/internal/gitdir"
	"github.com/kbqdev/kbq/internal/postgres/pgread"
	"github.com/kbqdev/kbq/internal/postgres/pgstore"
	"github.com/kbqdev/kbq/internal/units"
	"github.com/kbqdev/kbq/internal/visible"
)

type publishOptions struct {
	source           sourceOptions
	db, repo         string
	out              string
	force            bool
	replaceUnrelated bool
	keepGoing        bool
	visibility       string
	orgScope         bool
	orgScopeSet      bool // --org-scope was given, on or off
}

func newPublishCommand(s *cli.Streams, g *globalOptions) *cli.Command {
	o := &publishOptions{}
	return &cli.Command{
		Name:      "publish",
		Usage:     "publish a commit's knowledge into PostgreSQL",
		UsageText: "kbc publish [--db URL] [--repo NAME] [--rev REV] [--force] [--visibility V] [--org-scope [off]]",
		Description: `Compiles a commit (HEAD unless --rev) and writes its knowledge into a
PostgreSQL database, where kbq --db serves it and plain SQL reads it
(docs/postgres.md): a row per repository, per document and per chunk, and
each distinct chunk text once, with its tsvector under a GIN index.

A publish is one transaction: readers see the repository's previous
knowledge or the new, and a publish that fails or is killed leaves the
previous. Documents that did not change are not rewritten: republishing a
commit writes nothing, and a one-file change about one file's rows.
Publishing a commit older than the one published, or not descending from
it, is refused (--force overrides). A name that holds another
repository's history (a commit this repository lacks, or one with no
common ancestor) is taken: publish under another --repo, or replace that
repository's knowledge with --force --replace-unrelated. kbc unpublish
removes a repository. Publishes of one repository take
turns, of different repositories they run side by side. kbc creates and
migrates the schema; a database set up by a newer kbc is refused. Besides
its own session, a publish opens up to three more that only read, where the
server grants them, to have the server look up the chunks' texts and
compute the tsvectors of new ones side by side.

The database is --db URL, else $KBQ_DATABASE_URL, else libpq's PGHOST,
PGPORT, PGUSER, PGDATABASE and PGPASSWORD; keep passwords out of
.kb/config.yaml and out of URLs on shared command lines. The repository is
named by --repo, else by its origin remote (github.com/org/repo; an
origin that is a local path names nothing others know: give --repo). The
repository's .kbq/ is published as it is when kbc build --rev made it from
that commit (as CI does); otherwise the commit is built into
.kbq/published (--out), so that the next publish builds only what
changed. The global scope is never published.

WHO READS IT: a repository is private (the default of its first publish),
internal or public (--visibility; a later publish that does not say keeps
it); --visibility github asks GitHub's API ($GITHUB_API_URL, else
https://api.github.com, with $GITHUB_TOKEN when set, as in GitHub Actions)
for the repository's own. Private knowledge is read by the principals kbc grant names, public
and internal knowledge by every caller kbq serve lets in and every
database role that reads kbq's tables (docs/security.md). --org-scope
marks the repository as the organisation's own knowledge, in force in
every repository read with the database between the global scope and the
project's (after those marked before it); --org-scope off unmarks it.

EXAMPLES:
   kbc publish --db postgres://kbq@db.internal/knowledge
   KBQ_DATABASE_URL=... kbc publish --rev v1.4.0 --repo github.com/org/api
   kbc publish --repo github.com/org/handbook --visibility internal --org-scope

` + exitCodesHelp,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "db", Usage: "the database `URL` (default: $KBQ_DATABASE_URL, else libpq's PG* variables)", Destination: &o.db},
			&cli.StringFlag{Name: "repo", Usage: "publish as repository `NAME` (default: the origin remote as host/path)", Destination: &o.repo},
			&cli.StringFlag{Name: "rev", Usage: "publish the commit `REV` (default: HEAD)", Destination: &o.source.rev},
			&cli.StringFlag{Name: "out", Aliases: []string{"o"}, Usage: "build the commit's artifact in `DIR` (default: .kbq/published)", Destination: &o.out},
			&cli.BoolFlag{Name: "force", Usage: "publish over a newer commit, or one this commit does not descend from", Destination: &o.force},
			&cli.BoolFlag{Name: "replace-unrelated", Usage: "with --force, replace a repository of the same name whose history is not this one's", Destination: &o.replaceUnrelated},
			&cli.BoolFlag{Name: "keep-going", Usage: "leave out files with errors instead of publishing nothing", Destination: &o.keepGoing},
			&cli.StringFlag{Name: "visibility", Complete: cli.Values(append(pgstore.Visibilities, "github")...), Usage: "who may read it: `V` is public, internal, private, or github: as GitHub has the repository (default: private at the first publish, then as it was)", Destination: &o.visibility},
			&cli.BoolFlag{Name: "org-scope", Usage: "mark it as the organisation's own knowledge, in force in every repository (--org-scope off unmarks it)", Destination: &o.orgScope},
		},
		Action: func(c *cli.Context) error {
			o.orgScopeSet = c.IsSet("org-scope")
			if args := c.Args().Slice(); o.orgScopeSet && len(args) == 1 && (args[0] == "off" || args[0] == "on") {
				o.orgScope = args[0] == "on" // --org-scope off
			} else if c.Args().Present() {
				return cli.Usagef("kbc publish takes no arguments; name the commit with --rev")
			}
			if o.visibility != "" && o.visibility != "github" && !slices.Contains(pgstore.Visibilities, o.visibility) {
				return cli.Usagef("--visibility %q: want public, internal, private, or github (as GitHub has it)", o.visibility)
			}
			return runPublish(c.Context, s, g, o)
		},
	}
}

func runPublish(ctx context.Context, s *cli.Streams, g *globalOptions, o *publishOptions) error {
	cfg, err := pgread.Config(o.db, s.Getenv)
	if err != nil {
		return cli.Usagef("%v", err)
	}
	o.source.revSet, o.source.noGlobal = true, true
	src, err := openSource(s, g.workDir(), &o.source)
	if err != nil {
		return err
	}
	if o.replaceUnrelated && !o.force {
		return cli.Usagef("--replace-unrelated goes with --force: together they replace another repository's knowledge")
	}
	name := o.repo
	if name == "" {
		origin := ""
		if d, err := gitdir.Find(g.workDir()); err == nil {
			origin = d.Origin()
			name = gitdir.RepoName(origin)
		}
		switch {
		case origin != "" && gitdir.IsLocalURL(origin):
			return cli.Usagef("the origin remote is a local path (%s), which names no repository others know: give --repo NAME, such as github.com/org/repo", visible.Line(origin))
		case name == "":
			return cli.Usagef("the repository has no origin remote to name it by: give --repo NAME")
		}
	}
	if err := pgstore.CheckRepoName(name); err != nil {
		if o.repo == "" {
			return cli.Usagef("%v (from the origin remote): give --repo NAME", err)
		}
		return cli.Usagef("--repo: %v", err)
	}
	out := o.out
	if out == "" {
		if src.repo.Root() == "" {
			return cli.Usagef("a bare repository has no root to build in: give --out DIR")
		}
		out = filepath.Join(src.repo.Root(), artifact.DefaultDir, "published")
		// The repository's own artifact, when a build made it from this
		// very commit (kbc build --rev in CI), is published as it is.
		main := filepath.Join(src.repo.Root(), artifact.DefaultDir)
		if m, err := artifact.ReadHeader(main); err == nil && m.Source.Mode == "rev" && !m.Source.Dirty &&
			m.Source.Commit == src.info.Commit && !m.Global.Included {
			out = main
		}
	}
	if out != filepath.Join(src.repo.Root(), artifact.DefaultDir) {
		// The configuration's embeddings, as kbc build embeds.
		e := &embedders{ctx: ctx, s: s}
		defer e.close()
		src.options.OpenEmbedder = e.open
		// The working tree's artifact lends its vectors: a chunk of the
		// same text is not embedded twice.
		set := compileSettings{out: out, analysis: artifact.DefaultAnalysis, keepGoing: o.keepGoing, format: "text", diagnostics: s.Out,
			reuseVectors: filepath.Join(src.repo.Root(), artifact.DefaultDir)}
		if _, err := compile(ctx, s, src, set); err != nil {
			return err
		}
	}
	art, closeArtifact, err := pgstore.OpenSource(out, name)
	if err != nil {
		return err
	}
	defer closeArtifact()
	start := time.Now()
	conn, err := pgread.Connect(ctx, cfg)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	visibility := o.visibility
	if visibility == "github" {
		if visibility, err = githubVisibility(ctx, s.Getenv, name); err != nil {
			return err
		}
	}
	opts := pgstore.Options{Force: o.force, IsAncestor: src.repo.IsAncestor,
		Unrelated: src.repo.Unrelated, ReplaceUnrelated: o.replaceUnrelated, Visibility: visibility}
	if o.orgScopeSet {
		opts.OrgScope = map[bool]string{true: "on", false: "off"}[o.orgScope]
	}
	pub, err := pgstore.Publish(ctx, conn, art, opts)
	if err != nil {
		return publishError(err, cfg)
	}
	what := fmt.Sprintf("%d added, %d changed, %d re-dated, %d removed, %d %s written", pub.Added, pub.Changed, pub.Redated, pub.Removed, pub.Chunks, plural(pub.Chunks, "chunk", "chunks"))
	if pub.Chunks > 0 {
		what += fmt.Sprintf(" (%d new %s)", pub.Texts, plural(pub.Texts, "text", "texts"))
	}
	if pub.Vectors > 0 {
		what += fmt.Sprintf(", %d chunk vectors", pub.Vectors)
	}
	if pub.Bytes > 0 {
		what += ", " + units.Bytes(pub.Bytes) + " of index files sent"
	}
	if pub.Unchanged() {
		what = "nothing changed"
	}
	from := ""
	if pub.Previous != "" && pub.Previous != art.Commit {
		from = fmt.Sprintf(" (was %.12s)", pub.Previous)
	}
	if pub.VectorsNote != "" {
		fmt.Fprintf(s.Err, "kbc: note: %s; kbq --db ranks by meaning with the artifact's own vectors\n", pub.VectorsNote)
	}
	vectors := "no vectors (words only)"
	if e := art.Header.Embeddings; e != nil {
		vectors = "vectors of " + e.Model
	}
	fmt.Fprintf(s.Err, "kbc: published %s at %.12s%s to %s with %s: %s in %.2fs\n", name, art.Commit, from, pgread.Where(cfg), vectors, what, time.Since(start).Seconds())
	return nil
}

// publishError explains a failed publish.
func publishError(err error, cfg *pgx.ConnConfig) error {
	var pgErr *pgconn.PgError
	switch {
	case errors.Is(err, pgstore.ErrTaken):
		return cli.Usagef("%v", err)
	case errors.Is(err, pgstore.ErrOlder), errors.Is(err, pgstore.ErrDiverged), errors.Is(err, pgstore.ErrSchemaNewer):
		return err
	case errors.As(err, &pgErr) && pgErr.Code == "42501":
		return fmt.Errorf("user %s may not write to %s: publish as a role that owns the kbq tables (%s)", cfg.User, pgread.Where(cfg), pgErr.Message)
	}
	return fmt.Errorf("publish to %s: %v", pgread.Where(cfg), pgread.Redact(err))
}

func newUnpublishCommand(s *cli.Streams) *cli.Command {
	var db, repo string
	return &cli.Command{
		Name:      "unpublish",
		Usage:     "remove a repository's knowledge from PostgreSQL",
		UsageText: "kbc unpublish --repo NAME [--db URL]",
		Description: `Removes repository NAME from the database kbc publish writes, in one
transaction: its documents, chunks, vectors and files, and the stored
files and chunk texts no other repository names. Readers see it whole or
gone. A publish of the same repository running meanwhile is waited for.

EXAMPLES:
   kbc unpublish --repo github.com/org/old-api --db postgres://kbq@db.internal/knowledge

` + exitCodesHelp,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "db", Usage: "the database `URL` (default: $KBQ_DATABASE_URL, else libpq's PG* variables)", Destination: &db},
			&cli.StringFlag{Name: "repo", Usage: "the repository `NAME` to remove, as kbq repos or kbq --db show it (required)", Destination: &repo},
		},
		Action: func(c *cli.Context) error {
			if c.Args().Present() {
				return cli.Usagef("kbc unpublish takes no arguments; name the repository with --repo")
			}
			if repo == "" {
				return cli.Usagef("kbc unpublish needs --repo NAME: the repository to remove")
			}
			cfg, err := pgread.Config(db, s.Getenv)
			if err != nil {
				return cli.Usagef("%v", err)
			}
			conn, err := pgread.Connect(c.Context, cfg)
			if err != nil {
				return err
			}
			defer conn.Close(context.Background())
			gone, err := pgstore.Unpublish(c.Context, conn, repo)
			if errors.Is(err, pgstore.ErrNotPublished) {
				return cli.Usagef("%v", err)
			}
			if err != nil {
				return publishError(err, cfg)
			}
			fmt.Fprintf(s.Err, "kbc: unpublished %s from %s: %d %s of commit %.12s removed\n", repo, pgread.Where(cfg),
				gone.Documents, plural(gone.Documents, "document", "documents"), gone.Commit)
			return nil
		},
	}
}
