package pgstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/jackc/pgx/v5"

	"github.com/kbqdev/kbq/artifact"
	"github.com/kbqdev/kbq/internal/postgres/blocks"
	"github.com/kbqdev/kbq/query"
)

// A File is one file of an artifact, by its name inside the artifact
// directory and the SHA-256 of its content.
type File struct {
	Name, Hash string
	Size       int64
}

// ArtifactFiles lists the files of the artifact in dir that kbq reads:
// the manifest, every file of its index directory, and its ages table.
func ArtifactFiles(dir string, m *artifact.Manifest) ([]File, error) {
	indexDir, err := m.IndexDir(dir)
	if err != nil {
		return nil, err
	}
	names := []string{artifact.ManifestFile}
	if m.Ages != "" {
		names = append(names, m.Ages)
	}
	err = filepath.WalkDir(indexDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		names = append(names, filepath.ToSlash(rel))
		return err
	})
	if err != nil {
		return nil, err
	}
	var files []File
	for _, name := range names {
		data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
		if err != nil {
			return nil, err
		}
		sum := sha256.Sum256(data)
		files = append(files, File{Name: name, Hash: hex.EncodeToString(sum[:]), Size: int64(len(data))})
	}
	return files, nil
}

// writeFiles stores the artifact's files the database lacks, by content,
// and names the repository's; files no repository names any longer are
// removed. Unchanged files, segments an incremental build kept among
// them, are not sent again.
func writeFiles(ctx context.Context, tx pgx.Tx, repoID int64, dir string, files []File) (sent int64, err error) {
	hashes := make([]string, len(files))
	for i, f := range files {
		hashes[i] = f.Hash
	}
	// have: the files the database holds, true for those with their
	// blocks' hashes; a file published before version 7 gets them now.
	have := map[string]bool{}
	rows, err := tx.Query(ctx, `SELECT hash, blocks IS NOT NULL FROM kbq_file WHERE hash = ANY($1)`, hashes)
	if err != nil {
		return 0, err
	}
	for rows.Next() {
		var h string
		var hashed bool
		if err := rows.Scan(&h, &hashed); err != nil {
			return 0, err
		}
		have[h] = hashed
	}
	if err := rows.Err(); err != nil {
		return 0, err
	}
	for _, f := range files {
		hashed, held := have[f.Hash]
		if hashed {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f.Name)))
		if err != nil {
			return 0, err
		}
		if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != f.Hash {
			return 0, fmt.Errorf("%s changed while it was published", f.Name)
		}
		if held {
			if _, err := tx.Exec(ctx, `UPDATE kbq_file SET blocks = $2 WHERE hash = $1 AND blocks IS NULL`, f.Hash, blocks.Hashes(data)); err != nil {
				return 0, fmt.Errorf("write the block hashes of %s: %w", f.Name, err)
			}
			have[f.Hash] = true
			continue
		}
		if _, err := tx.Exec(ctx, `INSERT INTO kbq_file (hash, size, data, blocks) VALUES ($1, $2, $3, $4) ON CONFLICT (hash) DO NOTHING`, f.Hash, f.Size, data, blocks.Hashes(data)); err != nil {
			return 0, fmt.Errorf("write %s: %w", f.Name, err)
		}
		have[f.Hash] = true
		sent += f.Size
	}
	// The repository's file list changes by what differs: a republish of
	// the same artifact writes no row.
	named := map[string]string{}
	rows, err = tx.Query(ctx, `SELECT name, hash FROM kbq_repo_file WHERE repo_id = $1`, repoID)
	if err != nil {
		return 0, err
	}
	for rows.Next() {
		var name, hash string
		if err := rows.Scan(&name, &hash); err != nil {
			return 0, err
		}
		named[name] = hash
	}
	if err := rows.Err(); err != nil {
		return 0, err
	}
	var gone []string
	var add [][]any
	want := make(map[string]bool, len(files))
	for _, f := range files {
		want[f.Name] = true
		if h, ok := named[f.Name]; !ok || h != f.Hash {
			if ok {
				gone = append(gone, f.Name)
			}
			add = append(add, []any{repoID, f.Name, f.Hash})
		}
	}
	for name := range named {
		if !want[name] {
			gone = append(gone, name)
		}
	}
	if len(gone) == 0 && len(add) == 0 {
		return sent, nil
	}
	if len(gone) > 0 {
		if _, err := tx.Exec(ctx, `DELETE FROM kbq_repo_file WHERE repo_id = $1 AND name = ANY($2)`, repoID, gone); err != nil {
			return 0, err
		}
	}
	if err := insertRows(ctx, tx, "kbq_repo_file", []string{"repo_id", "name", "hash"}, nil, add); err != nil {
		return 0, err
	}
	if len(gone) > 0 {
		_, err = tx.Exec(ctx, `DELETE FROM kbq_file f WHERE NOT EXISTS (SELECT 1 FROM kbq_repo_file r WHERE r.hash = f.hash)`)
	}
	return sent, err
}

// OpenSource opens the artifact in dir as what a publish of repository
// repo writes: its manifest, documents, chunks, vectors and files, at the
// commit it was built from. Close releases the artifact.
func OpenSource(dir, repo string) (src *Source, close func() error, err error) {
	ix, err := query.Open(dir)
	if err != nil {
		return nil, nil, err
	}
	docs, err := ix.Documents()
	if err == nil {
		var files []File
		if files, err = ArtifactFiles(dir, ix.Manifest); err == nil {
			return &Source{Repo: repo, Commit: ix.Manifest.Source.Commit, Header: ix.Manifest, Documents: docs,
				Chunks: ix.Chunks, Vectors: ix.Vectors, Dir: dir, Files: files}, ix.Close, nil
		}
	}
	ix.Close()
	return nil, nil, err
}
