package query

import (
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/kbqdev/kbq/artifact"
)

// Stats describes an artifact.
type Stats struct {
	Documents       int             `json:"documents"`
	Chunks          int             `json:"chunks"`
	ByKind          map[string]int  `json:"by_kind"`
	ByScope         map[string]int  `json:"by_scope"`
	Bytes           int64           `json:"bytes"`
	FormatVersion   int             `json:"format_version"`
	CompilerVersion string          `json:"compiler_version"`
	Source          artifact.Source `json:"source"`
	BuiltAt         time.Time       `json:"built_at"`
	AgeSeconds      int64           `json:"age_seconds"`
	// WrittenAt is when the manifest file was written: the artifact's
	// file time, where BuiltAt is the source's (a commit's time, unless
	// the build read uncommitted knowledge).
	WrittenAt time.Time `json:"written_at"`
	Global    bool      `json:"global"`
	Dir       string    `json:"dir"`
	// Stale is true when the artifact is behind what it was built from:
	// knowledge files changed since a build from the working tree (Changed
	// lists them, up to ten), or HEAD moved since a build from a commit.
	Stale   bool     `json:"stale"`
	Changed []string `json:"changed,omitempty"`
}

// Stats reports counts, size, version and age of the artifact.
func (ix *Index) Stats(now time.Time) (*Stats, error) {
	m := ix.Manifest
	st := &Stats{
		Documents: m.Counts.Documents, Chunks: m.Counts.Chunks, ByKind: m.Counts.ByKind, ByScope: m.Counts.ByScope,
		FormatVersion: m.FormatVersion, CompilerVersion: m.CompilerVersion, Source: m.Source,
		BuiltAt: m.BuiltAt, AgeSeconds: int64(now.Sub(m.BuiltAt).Seconds()), Global: m.Global.Included, Dir: ix.Dir,
	}
	indexDir, err := m.IndexDir(ix.Dir)
	if err != nil {
		return nil, err
	}
	if fi, err := os.Stat(filepath.Join(ix.Dir, artifact.ManifestFile)); err == nil {
		st.WrittenAt = fi.ModTime().UTC().Truncate(time.Second)
	}
	parts := []string{indexDir, filepath.Join(ix.Dir, artifact.ManifestFile)}
	if ages := filepath.Join(ix.Dir, m.Ages); m.Ages != "" && filepath.Base(m.Ages) == m.Ages {
		if _, err := os.Stat(ages); err == nil {
			parts = append(parts, ages)
		}
	}
	for _, p := range parts {
		err := filepath.WalkDir(p, func(_ string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() {
				info, err := d.Info()
				if err != nil {
					return err
				}
				st.Bytes += info.Size()
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return st, nil
}
