// Package pgstore keeps compiled knowledge in PostgreSQL: kbc publish
// writes a commit's artifact there, a repository at a time, and plain SQL
// clients can read the rows (docs/postgres.md).
//
// The schema is created and migrated by Migrate and versioned in
// kbq_schema; a database whose schema is newer than this program's is
// refused. Every value reaches SQL as a parameter.
package pgstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// SchemaVersion is the version of the schema this program writes.
//
//	1  kbq_repo, kbq_document and kbq_chunk, with a tsvector per chunk;
//	   kbq_file and kbq_repo_file, the artifact's files by content
//	2  kbq_chunk.tsv is written by kbc, still computed by the server's
//	   to_tsvector, rather than generated on insert: a publish computes
//	   it in several sessions at once; kbq_file.data is stored
//	   uncompressed, so that kbq reads a file's pieces side by side
//	3  kbq_chunk.text_key names the text a tsvector was computed from, so
//	   that a publish reuses the tsvectors of texts the database holds
//	4  each distinct text is kept once, with its tsvector, in kbq_text,
//	   and the GIN index is over those: a publish of texts the database
//	   holds, in any repository, adds no tsvector and no index entry;
//	   kbq_chunk_search is each chunk with its text's tsvector
//	5  kbq_chunk has no foreign keys, whose checks, one per chunk row
//	   written, were half the time of writing the chunks: kbc writes a
//	   chunk with its document, and locks its text (holdTexts); deleting
//	   documents deletes their chunks by a statement trigger
//	6  who may read what: kbq_repo carries its visibility (public,
//	   internal, private) and whether it is an org scope (org_scope, the
//	   order among them); kbq_grant names principals and repository
//	   patterns; row-level security on every kbq table lets a database
//	   role read only the repositories its grants and their visibility
//	   allow (access.go). Repositories published before keep being read
//	   as they were: they are internal, and every role that could read
//	   them is granted all
//	7  kbq_file.blocks keeps the SHA-256 of each 64 KiB block of a file
//	   (package blocks), so that kbq reads what a search needs of a file,
//	   checked, before the rest: a segment's stored fields, most of its
//	   size, as results need them. A file published before gets them
//	   when a publish names it again; until then it is read whole
const SchemaVersion = 7

// schema creates the current version.
var schema = []string{
	`CREATE TABLE kbq_schema (version integer NOT NULL)`,
	`CREATE TABLE kbq_repo (
		id           bigserial PRIMARY KEY,
		name         text NOT NULL UNIQUE,
		commit       text NOT NULL,
		published_at timestamptz NOT NULL,
		header       jsonb NOT NULL
	)`,
	`CREATE TABLE kbq_document (
		repo_id     bigint NOT NULL REFERENCES kbq_repo (id) ON DELETE CASCADE,
		path        text NOT NULL,
		blob        text NOT NULL,
		digest      text NOT NULL,
		age_digest  text NOT NULL,
		kind        text NOT NULL,
		scope       text NOT NULL,
		topic       text NOT NULL,
		title       text NOT NULL,
		tags        text[] NOT NULL,
		document    jsonb NOT NULL,
		frontmatter text NOT NULL,
		body        text NOT NULL,
		PRIMARY KEY (repo_id, path)
	)`,
	`CREATE TABLE kbq_text (
		key bytea PRIMARY KEY,
		tsv tsvector NOT NULL
	)`,
	`CREATE INDEX kbq_text_tsv ON kbq_text USING gin (tsv)`,
	`CREATE TABLE kbq_chunk (
		repo_id    bigint NOT NULL,
		path       text NOT NULL,
		chunk      integer NOT NULL,
		heading    text NOT NULL,
		line_start integer NOT NULL,
		line_end   integer NOT NULL,
		body       text NOT NULL,
		text_key   bytea NOT NULL, -- kbq_text (key)
		PRIMARY KEY (repo_id, path, chunk) -- kbq_document (repo_id, path)
	)`,
	`CREATE INDEX kbq_chunk_text_key ON kbq_chunk (text_key)`,
	chunkSearchView,
	documentDeleted,
	`CREATE TRIGGER kbq_document_deleted AFTER DELETE ON kbq_document
		REFERENCING OLD TABLE AS deleted FOR EACH STATEMENT EXECUTE FUNCTION kbq_document_deleted()`,
	`CREATE TABLE kbq_file (
		hash   text PRIMARY KEY,
		size   bigint NOT NULL,
		data   bytea NOT NULL,
		blocks bytea
	)`,
	`ALTER TABLE kbq_file ALTER COLUMN data SET STORAGE EXTERNAL`,
	`CREATE TABLE kbq_repo_file (
		repo_id bigint NOT NULL REFERENCES kbq_repo (id) ON DELETE CASCADE,
		name    text NOT NULL,
		hash    text NOT NULL REFERENCES kbq_file (hash),
		PRIMARY KEY (repo_id, name)
	)`,
	`INSERT INTO kbq_schema (version) VALUES (7)`,
}

func init() {
	// The access rules are the last step of the schema as of the
	// migration that brought them.
	n := len(schema) - 1
	schema = append(schema[:n:n], append(accessSchema, schema[n])...)
}

// documentDeleted deletes the chunks of deleted documents, as a cascading
// foreign key would, in one statement however many they are.
const documentDeleted = `CREATE FUNCTION kbq_document_deleted() RETURNS trigger
	LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
	BEGIN
		DELETE FROM kbq_chunk c USING deleted d WHERE c.repo_id = d.repo_id AND c.path = d.path;
		RETURN NULL;
	END $$`

// chunkSearchView is each chunk with its text's tsvector, for plain SQL.
const chunkSearchView = `CREATE VIEW kbq_chunk_search AS
	SELECT c.repo_id, c.path, c.chunk, c.heading, c.line_start, c.line_end, c.body, t.tsv
	FROM kbq_chunk c JOIN kbq_text t ON t.key = c.text_key`

// textKeySQL is textKey in SQL, of a row's heading and body.
const textKeySQL = `substring(sha256('\x6b6271207473766563746f7200656e676c69736800'::bytea
	|| convert_to(split_part(current_setting('server_version'), '.', 1), 'UTF8') || '\x00'::bytea
	|| convert_to(heading, 'UTF8') || '\x00'::bytea || convert_to(body, 'UTF8')) FROM 1 FOR 16)`

// migrations[v] brings version v up to v+1.
var migrations = map[int][]string{
	1: {
		`ALTER TABLE kbq_chunk ALTER COLUMN tsv DROP EXPRESSION`,
		`ALTER TABLE kbq_chunk ALTER COLUMN tsv SET NOT NULL`,
		`ALTER TABLE kbq_file ALTER COLUMN data SET STORAGE EXTERNAL`,
		`UPDATE kbq_schema SET version = 2`,
	},
	2: {
		`ALTER TABLE kbq_chunk ADD COLUMN text_key bytea`,
		`CREATE INDEX kbq_chunk_text_key ON kbq_chunk (text_key)`,
		`UPDATE kbq_schema SET version = 3`,
	},
	3: {
		`UPDATE kbq_chunk SET text_key = ` + textKeySQL + ` WHERE text_key IS NULL`,
		`CREATE TABLE kbq_text (key bytea PRIMARY KEY, tsv tsvector NOT NULL)`,
		`INSERT INTO kbq_text (key, tsv) SELECT DISTINCT ON (text_key) text_key, tsv FROM kbq_chunk ORDER BY text_key`,
		`ALTER TABLE kbq_chunk DROP COLUMN tsv`,
		`ALTER TABLE kbq_chunk ALTER COLUMN text_key SET NOT NULL`,
		`ALTER TABLE kbq_chunk ADD FOREIGN KEY (text_key) REFERENCES kbq_text (key)`,
		`CREATE INDEX kbq_text_tsv ON kbq_text USING gin (tsv)`,
		chunkSearchView,
		// The roles that read the chunks read their texts.
		`DO $$ DECLARE r text; BEGIN
			FOR r IN SELECT DISTINCT grantee FROM information_schema.role_table_grants
				WHERE table_name = 'kbq_chunk' AND privilege_type = 'SELECT' AND grantee <> current_user LOOP
				EXECUTE 'GRANT SELECT ON kbq_text, kbq_chunk_search TO ' || CASE WHEN r = 'PUBLIC' THEN 'PUBLIC' ELSE quote_ident(r) END;
			END LOOP;
		END $$`,
		`UPDATE kbq_schema SET version = 4`,
	},
	4: {
		`DO $$ DECLARE c text; BEGIN
			FOR c IN SELECT conname FROM pg_constraint WHERE conrelid = 'kbq_chunk'::regclass AND contype = 'f' LOOP
				EXECUTE 'ALTER TABLE kbq_chunk DROP CONSTRAINT ' || quote_ident(c);
			END LOOP;
		END $$`,
		documentDeleted,
		`CREATE TRIGGER kbq_document_deleted AFTER DELETE ON kbq_document
			REFERENCING OLD TABLE AS deleted FOR EACH STATEMENT EXECUTE FUNCTION kbq_document_deleted()`,
		`UPDATE kbq_schema SET version = 5`,
	},
	5: append(append([]string{
		accessSchema[0],
		// What every reader read, it reads still.
		`INSERT INTO kbq_grant (principal, pattern)
			SELECT DISTINCT 'role:' || grantee, '*' FROM information_schema.role_table_grants
			WHERE table_name = 'kbq_repo' AND privilege_type = 'SELECT' AND grantee NOT IN (current_user, 'PUBLIC')`,
	}, accessSchema[1:]...),
		`UPDATE kbq_repo SET visibility = 'internal'`,
		`UPDATE kbq_schema SET version = 6`),
	6: {
		`ALTER TABLE kbq_file ADD COLUMN blocks bytea`,
		`UPDATE kbq_schema SET version = 7`,
	},
}

// schemaLock is the advisory lock key under which the schema is created
// or migrated, so that two first publishes do not race.
const schemaLock = 0x6b627173636865 // "kbqsche"

// ErrSchemaNewer means the database was set up by a newer kbc.
var ErrSchemaNewer = errors.New("the database's kbq schema is newer than this program's")

// ErrNoSchema means the database holds no kbq schema: nothing was ever
// published there.
var ErrNoSchema = errors.New("the database holds no kbq knowledge")

// Version returns the schema version of the database, 0 when it has none.
func Version(ctx context.Context, conn *pgx.Conn) (int, error) {
	var exists bool
	if err := conn.QueryRow(ctx, `SELECT to_regclass('kbq_schema') IS NOT NULL`).Scan(&exists); err != nil {
		return 0, err
	}
	if !exists {
		return 0, nil
	}
	var v int
	if err := conn.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM kbq_schema`).Scan(&v); err != nil {
		return 0, err
	}
	return v, nil
}

// Migrate creates the schema, or brings an older one up to
// SchemaVersion.
func Migrate(ctx context.Context, conn *pgx.Conn) error {
	tx, err := conn.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(schemaLock)); err != nil {
		return err
	}
	v, err := Version(ctx, tx.Conn())
	if err != nil {
		return err
	}
	switch {
	case v > SchemaVersion:
		return fmt.Errorf("%w (%d, this kbc writes %d): upgrade kbc", ErrSchemaNewer, v, SchemaVersion)
	case v == SchemaVersion:
		return nil
	case v == 0:
		for _, stmt := range schema {
			if _, err := tx.Exec(ctx, stmt); err != nil {
				return fmt.Errorf("create the kbq schema: %w", err)
			}
		}
	default:
		for ; v < SchemaVersion; v++ {
			for _, stmt := range migrations[v] {
				if _, err := tx.Exec(ctx, stmt); err != nil {
					return fmt.Errorf("migrate the kbq schema from version %d: %w", v, err)
				}
			}
		}
	}
	return tx.Commit(ctx)
}

// ReadOnlyGrants are the statements that make role, created if need be, a
// reader of the published knowledge and nothing more.
func ReadOnlyGrants(role string) []string {
	r := pgx.Identifier{role}.Sanitize()
	return []string{
		`DO $$ BEGIN CREATE ROLE ` + r + ` LOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END $$`,
		`GRANT USAGE ON SCHEMA public TO ` + r,
		`GRANT SELECT ON kbq_schema, kbq_repo, kbq_document, kbq_chunk, kbq_text, kbq_chunk_search, kbq_file, kbq_repo_file TO ` + r,
	}
}
