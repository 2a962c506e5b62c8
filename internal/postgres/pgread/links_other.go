//go:build !unix

package pgread

import "io/fs"

// links is unknown here: fetched files are kept.
func links(fs.FileInfo) (uint64, bool) { return 0, false }
