package pgstore

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
)

// ensureVectors prepares kbq_chunk_vector, a vector(dims) per chunk under
// an HNSW index, when the database has the vector extension (pgvector) or
// lets kbc create it. It returns "" then, else why chunk vectors are not
// stored there; kbq --db ranks by meaning with the artifact's own vectors
// either way.
func ensureVectors(ctx context.Context, conn *pgx.Conn, dims int) (string, error) {
	tx, err := conn.Begin(ctx)
	if err != nil {
		return "", err
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(schemaLock)); err != nil {
		return "", err
	}
	var have, available bool
	if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'vector'),
		EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'vector')`).Scan(&have, &available); err != nil {
		return "", err
	}
	switch {
	case !have && !available:
		return "the database has no vector extension (pgvector): chunk vectors are not stored for SQL clients", nil
	case !have:
		if _, err := tx.Exec(ctx, `CREATE EXTENSION IF NOT EXISTS vector`); err != nil {
			return "could not create the vector extension (" + err.Error() + "): chunk vectors are not stored for SQL clients", nil
		}
	}
	// Dimensions are a number, not a value from outside: DDL takes no
	// parameters.
	if _, err := tx.Exec(ctx, fmt.Sprintf(`CREATE TABLE IF NOT EXISTS kbq_chunk_vector (
		repo_id   bigint NOT NULL,
		path      text NOT NULL,
		chunk     integer NOT NULL,
		embedding vector(%d) NOT NULL,
		PRIMARY KEY (repo_id, path, chunk),
		FOREIGN KEY (repo_id, path, chunk) REFERENCES kbq_chunk (repo_id, path, chunk) ON DELETE CASCADE
	)`, dims)); err != nil {
		return "", err
	}
	var stored int
	if err := tx.QueryRow(ctx, `SELECT atttypmod FROM pg_attribute WHERE attrelid = 'kbq_chunk_vector'::regclass AND attname = 'embedding'`).Scan(&stored); err != nil {
		return "", err
	}
	if stored != dims {
		return fmt.Sprintf("kbq_chunk_vector holds vectors of %d dimensions, and this artifact's have %d: its chunk vectors are not stored", stored, dims), nil
	}
	if _, err := tx.Exec(ctx, `CREATE INDEX IF NOT EXISTS kbq_chunk_vector_hnsw ON kbq_chunk_vector USING hnsw (embedding vector_cosine_ops)`); err != nil {
		return "", err
	}
	if _, err := tx.Exec(ctx, vectorPolicy); err != nil {
		return "", err
	}
	return "", tx.Commit(ctx)
}

// vectorText writes v as pgvector's text form, [1,2,3].
func vectorText(v []float32) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, f := range v {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatFloat(float64(f), 'g', -1, 32))
	}
	b.WriteByte(']')
	return b.String()
}

// simple reports whether conn speaks PostgreSQL's simple query protocol
// only (default_query_exec_mode=simple_protocol), as PGlite's socket
// server does, which takes no COPY either.
func simple(tx pgx.Tx) bool {
	return tx.Conn().Config().DefaultQueryExecMode == pgx.QueryExecModeSimpleProtocol
}

// insertRows writes rows into table: by COPY, or, where the server takes
// no COPY, by INSERTs of up to 100 rows; casts name a cast for each column
// ("" for none), for types COPY's binary format does not know here.
func insertRows(ctx context.Context, tx pgx.Tx, table string, cols, casts []string, rows [][]any) error {
	if len(rows) == 0 {
		return nil
	}
	noCasts := true
	for _, c := range casts {
		noCasts = noCasts && c == ""
	}
	if !simple(tx) && noCasts {
		_, err := tx.CopyFrom(ctx, pgx.Identifier{table}, cols, pgx.CopyFromRows(rows))
		return err
	}
	for start := 0; start < len(rows); start += 100 {
		part := rows[start:min(start+100, len(rows))]
		var sql strings.Builder
		fmt.Fprintf(&sql, "INSERT INTO %s (%s) VALUES ", pgx.Identifier{table}.Sanitize(), strings.Join(cols, ", "))
		var args []any
		for i, row := range part {
			if i > 0 {
				sql.WriteString(", ")
			}
			sql.WriteByte('(')
			for j, v := range row {
				if j > 0 {
					sql.WriteString(", ")
				}
				args = append(args, v)
				fmt.Fprintf(&sql, "$%d", len(args))
				if j < len(casts) && casts[j] != "" {
					sql.WriteString("::" + casts[j])
				}
			}
			sql.WriteByte(')')
		}
		if _, err := tx.Exec(ctx, sql.String(), args...); err != nil {
			return err
		}
	}
	return nil
}
