//go:build linux && (amd64 || arm64)

package artifact

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// lstat reads the stat data of the file at path, which ends in a NUL byte,
// without following links and without allocating: os.Lstat allocates a
// FileInfo and a copy of the path, and a freshness check at 3,800
// directories spent more on that garbage than on the calls.
func lstat(path []byte) (stamp, bool) {
	var st unix.Stat_t
	cwd := unix.AT_FDCWD // a negative descriptor, passed as the kernel reads it
	_, _, errno := unix.Syscall6(unix.SYS_NEWFSTATAT, uintptr(cwd), uintptr(unsafe.Pointer(&path[0])),
		uintptr(unsafe.Pointer(&st)), unix.AT_SYMLINK_NOFOLLOW, 0, 0)
	if errno != 0 {
		return stamp{}, false
	}
	return stamp{mod: st.Mtim.Nano(), size: st.Size, regular: st.Mode&unix.S_IFMT == unix.S_IFREG}, true
}
