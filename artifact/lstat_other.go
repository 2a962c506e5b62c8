//go:build !(linux && (amd64 || arm64))

package artifact

import "os"

// lstat reads the stat data of the file at path, which ends in a NUL byte,
// without following links.
func lstat(path []byte) (stamp, bool) {
	fi, err := os.Lstat(string(path[:len(path)-1]))
	if err != nil {
		return stamp{}, false
	}
	return stamp{mod: fi.ModTime().UnixNano(), size: fi.Size(), regular: fi.Mode().IsRegular()}, true
}
