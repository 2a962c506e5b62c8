package pgstore

import (
	"github.com/kbqdev/kbq/internal/access"

	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
)

// Who may read what. A grant names a principal (user:NAME, group:NAME, or
// role:PGROLE, a database role) and a repository pattern: a name, or one
// with * standing for any run of characters (github.com/acme/*, or * for
// every repository). A repository is public, internal or private: public
// and internal ones are read by every caller kbq lets in and every
// database role that reads kbq's tables; a private one only by those its
// grants name. kbq serve enforces the grants in its own engine; the
// database enforces them for database roles with row-level security, so
// that a reporting role's plain SQL sees only its repositories' rows.
// A role that publishes owns the tables (the role of kbc's first publish)
// or bypasses row-level security (ALTER ROLE … BYPASSRLS), and reads
// everything.

// Visibilities a published repository may have.
var Visibilities = []string{"public", "internal", "private"}

// accessSchema is the row-level security of schema version 6. Its first
// statement creates kbq_grant.
var accessSchema = []string{
	`CREATE TABLE kbq_grant (
		principal text NOT NULL CHECK (principal ~ '^(user|group|role):.'),
		pattern   text NOT NULL CHECK (pattern <> ''),
		PRIMARY KEY (principal, pattern)
	)`,
	`ALTER TABLE kbq_repo ADD COLUMN visibility text NOT NULL DEFAULT 'private'
		CHECK (visibility IN ('public', 'internal', 'private'))`,
	`ALTER TABLE kbq_repo ADD COLUMN org_scope integer`,
	`CREATE INDEX kbq_repo_file_hash ON kbq_repo_file (hash)`,
	// A pattern's * is any run of characters; nothing else is special.
	`CREATE FUNCTION kbq_pattern_matches(name text, pattern text) RETURNS boolean
		LANGUAGE sql IMMUTABLE STRICT AS $$
		SELECT name LIKE replace(replace(replace(replace(pattern, '\', '\\'), '%', '\%'), '_', '\_'), '*', '%')
	$$`,
	// Whether the session's login role (or a role it is a member of) may
	// read repository repo. It reads kbq_repo and kbq_grant as their
	// owner, past their own policies.
	`CREATE FUNCTION kbq_may_read(repo bigint) RETURNS boolean
		LANGUAGE sql STABLE SECURITY DEFINER SET search_path FROM CURRENT AS $$
		SELECT EXISTS (SELECT 1 FROM kbq_repo r WHERE r.id = repo AND (r.visibility <> 'private' OR EXISTS (
			SELECT 1 FROM kbq_grant g JOIN pg_roles b ON g.principal = 'role:' || b.rolname
			WHERE kbq_pattern_matches(r.name, g.pattern) AND pg_has_role(session_user, b.oid, 'MEMBER'))))
	$$`,
	// The grants are read by the owner, and by a role granted SELECT on
	// them: a server that enforces them (ServerGrants).
	`ALTER TABLE kbq_grant ENABLE ROW LEVEL SECURITY`,
	`CREATE POLICY kbq_read ON kbq_grant FOR SELECT USING (true)`,
	`ALTER TABLE kbq_repo ENABLE ROW LEVEL SECURITY`,
	`CREATE POLICY kbq_read ON kbq_repo FOR SELECT USING (kbq_may_read(id))`,
	`ALTER TABLE kbq_document ENABLE ROW LEVEL SECURITY`,
	`CREATE POLICY kbq_read ON kbq_document FOR SELECT USING (kbq_may_read(repo_id))`,
	`ALTER TABLE kbq_chunk ENABLE ROW LEVEL SECURITY`,
	`CREATE POLICY kbq_read ON kbq_chunk FOR SELECT USING (kbq_may_read(repo_id))`,
	`ALTER TABLE kbq_repo_file ENABLE ROW LEVEL SECURITY`,
	`CREATE POLICY kbq_read ON kbq_repo_file FOR SELECT USING (kbq_may_read(repo_id))`,
	// Texts and files are shared by repositories: one is read where a
	// repository the role may read holds it.
	`ALTER TABLE kbq_text ENABLE ROW LEVEL SECURITY`,
	`CREATE POLICY kbq_read ON kbq_text FOR SELECT USING (EXISTS (
		SELECT 1 FROM kbq_chunk c WHERE c.text_key = kbq_text.key AND kbq_may_read(c.repo_id)))`,
	`ALTER TABLE kbq_file ENABLE ROW LEVEL SECURITY`,
	`CREATE POLICY kbq_read ON kbq_file FOR SELECT USING (EXISTS (
		SELECT 1 FROM kbq_repo_file f WHERE f.hash = kbq_file.hash AND kbq_may_read(f.repo_id)))`,
	// The view reads as the role that queries it, policies included.
	`ALTER VIEW kbq_chunk_search SET (security_invoker = true)`,
	vectorPolicy,
}

// vectorPolicy gives kbq_chunk_vector its row-level security when it
// exists and has none yet: the table is made by the first publish with
// vectors (ensureVectors).
const vectorPolicy = `DO $$ BEGIN
	IF to_regclass('kbq_chunk_vector') IS NOT NULL AND NOT EXISTS (
		SELECT 1 FROM pg_policies WHERE tablename = 'kbq_chunk_vector' AND policyname = 'kbq_read') THEN
		ALTER TABLE kbq_chunk_vector ENABLE ROW LEVEL SECURITY;
		CREATE POLICY kbq_read ON kbq_chunk_vector FOR SELECT USING (kbq_may_read(repo_id));
	END IF;
END $$`

// ServerGrants are the statements that make role, created if need be, the
// role of a server that enforces the grants for its callers (kbq serve
// --db): a reader of every repository and of the grants.
func ServerGrants(role string) []string {
	r := pgx.Identifier{role}.Sanitize()
	return append(ReadOnlyGrants(role),
		`GRANT SELECT ON kbq_grant TO `+r,
		`INSERT INTO kbq_grant (principal, pattern) VALUES (`+quoteLiteral("role:"+role)+`, '*') ON CONFLICT DO NOTHING`)
}

// quoteLiteral quotes s as an SQL string literal.
func quoteLiteral(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// A Grant lets Principal read the repositories Pattern names.
type Grant = access.Grant

// ErrGrant means a grant is not well formed.
var ErrGrant = errors.New("bad grant")

// CheckGrant says what is wrong with a grant, nil when nothing is.
func CheckGrant(g Grant) error {
	kind, name, ok := strings.Cut(g.Principal, ":")
	switch {
	case !ok || name == "" || !slices.Contains([]string{"user", "group", "role"}, kind):
		return fmt.Errorf("%w: the principal %q is not user:NAME, group:NAME or role:PGROLE", ErrGrant, g.Principal)
	case strings.TrimSpace(g.Pattern) == "" || strings.ContainsAny(g.Pattern, "\x00\n"):
		return fmt.Errorf("%w: the pattern %q names no repository: give a name, or one with * (github.com/acme/*, or * for all)", ErrGrant, g.Pattern)
	}
	return nil
}

// AddGrant records g; it reports false when it was there already.
func AddGrant(ctx context.Context, conn *pgx.Conn, g Grant) (bool, error) {
	if err := CheckGrant(g); err != nil {
		return false, err
	}
	if err := Migrate(ctx, conn); err != nil {
		return false, err
	}
	tag, err := conn.Exec(ctx, `INSERT INTO kbq_grant (principal, pattern) VALUES ($1, $2) ON CONFLICT DO NOTHING`, g.Principal, g.Pattern)
	if err != nil {
		return false, err
	}
	return tag.RowsAffected() == 1, nil
}

// RemoveGrant removes g; it reports false when there was no such grant.
func RemoveGrant(ctx context.Context, conn *pgx.Conn, g Grant) (bool, error) {
	if err := Migrate(ctx, conn); err != nil {
		return false, err
	}
	tag, err := conn.Exec(ctx, `DELETE FROM kbq_grant WHERE principal = $1 AND pattern = $2`, g.Principal, g.Pattern)
	if err != nil {
		return false, err
	}
	return tag.RowsAffected() == 1, nil
}

// Grants lists every grant, by principal and pattern.
func Grants(ctx context.Context, conn *pgx.Conn) ([]Grant, error) {
	if err := Migrate(ctx, conn); err != nil {
		return nil, err
	}
	rows, err := conn.Query(ctx, `SELECT principal, pattern FROM kbq_grant ORDER BY principal, pattern`)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowToStructByPos[Grant])
}

// setAccess records, in a publish, the repository's visibility (kept as
// it is when ""), and marks it as an org scope, last of them, or unmarks
// it (orgScope "on" or "off"; "" keeps it).
func setAccess(ctx context.Context, tx pgx.Tx, repoID int64, visibility, orgScope string) error {
	if visibility != "" {
		if !slices.Contains(Visibilities, visibility) {
			return fmt.Errorf("visibility %q: want public, internal or private", visibility)
		}
		if _, err := tx.Exec(ctx, `UPDATE kbq_repo SET visibility = $2 WHERE id = $1 AND visibility <> $2`, repoID, visibility); err != nil {
			return err
		}
	}
	switch orgScope {
	case "":
	case "on":
		_, err := tx.Exec(ctx, `UPDATE kbq_repo SET org_scope = (SELECT coalesce(max(org_scope), 0) + 1 FROM kbq_repo)
			WHERE id = $1 AND org_scope IS NULL`, repoID)
		return err
	case "off":
		_, err := tx.Exec(ctx, `UPDATE kbq_repo SET org_scope = NULL WHERE id = $1 AND org_scope IS NOT NULL`, repoID)
		return err
	default:
		return fmt.Errorf("org scope %q: want on or off", orgScope)
	}
	return nil
}
