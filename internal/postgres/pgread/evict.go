package pgread

import (
	"os"
	"path/filepath"
	"slices"
	"time"
)

// EvictAfter is how long an artifact directory of the cache that no fetch
// has used may stay: a server fetches every few seconds and so keeps its
// own in use, and a directory a process opened moments ago, whose files it
// may still open lazily, is kept for that long too.
var EvictAfter = 10 * time.Minute

// EvictEvery is how often the cache is looked through for what to evict:
// a server fetches every few seconds.
var EvictEvery = time.Minute

// evict removes what the cache keeps for nothing, once a fetch has placed
// the directories inUse: artifact directories no fetch used in
// EvictAfter, and then the fetched files no directory links any more
// (where the system counts links). It is best effort: what it cannot
// remove stays, and the next fetch tries again.
func evict(cache string, inUse []string, now time.Time) {
	for _, dir := range inUse {
		os.Chtimes(dir, now, now) // in use: kept
	}
	// The rest lists every fetched file: a server fetching every few
	// seconds does it at most once a minute (the stamp's time says when
	// it last ran, in any process).
	stamp := filepath.Join(cache, "evicted")
	if fi, err := os.Stat(stamp); err == nil && now.Sub(fi.ModTime()) < EvictEvery && now.Sub(fi.ModTime()) >= 0 {
		return
	}
	if f, err := os.Create(stamp); err == nil {
		f.Close()
		os.Chtimes(stamp, now, now)
	}
	repos := filepath.Join(cache, "repos")
	entries, _ := os.ReadDir(repos)
	for _, e := range entries {
		dir := filepath.Join(repos, e.Name())
		if !e.IsDir() || slices.Contains(inUse, dir) {
			continue
		}
		if fi, err := e.Info(); err == nil && now.Sub(fi.ModTime()) > EvictAfter {
			os.RemoveAll(dir)
		}
	}
	files := filepath.Join(cache, "files")
	entries, _ = os.ReadDir(files)
	for _, e := range entries {
		fi, err := e.Info()
		if err != nil || !fi.Mode().IsRegular() || now.Sub(fi.ModTime()) <= EvictAfter {
			continue // a file fetched moments ago may be about to be placed
		}
		if n, ok := links(fi); ok && n <= 1 {
			os.Remove(filepath.Join(files, e.Name()))
		}
	}
	// Directories a fetch began placing and never renamed.
	entries, _ = os.ReadDir(cache)
	for _, e := range entries {
		if fi, err := e.Info(); err == nil && e.IsDir() && len(e.Name()) > 8 && e.Name()[:8] == "placing-" && now.Sub(fi.ModTime()) > EvictAfter {
			os.RemoveAll(filepath.Join(cache, e.Name()))
		}
	}
}
