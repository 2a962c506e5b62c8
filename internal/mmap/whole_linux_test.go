package mmap

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"
)

// vmFlags returns the VmFlags /proc/self/smaps gives the mapping that
// starts at addr.
func vmFlags(t *testing.T, addr uintptr) []string {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	start := fmt.Sprintf("%x-", addr)
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, start):
			in = true
		case in && strings.HasPrefix(line, "VmFlags:"):
			return strings.Fields(strings.TrimPrefix(line, "VmFlags:"))
		}
	}
	t.Fatalf("no mapping at %#x in /proc/self/smaps", addr)
	return nil
}

// MapWhole marks its mapping for huge pages, so that the page cache reads
// the file in 2 MiB folios the mapping takes whole; Map does not.
func TestMapWholeAsksForHugePages(t *testing.T) {
	if _, err := os.Stat("/sys/kernel/mm/transparent_hugepage/enabled"); err != nil {
		t.Skip("no transparent huge pages here:", err)
	}
	name := filepath.Join(t.TempDir(), "weights")
	if err := os.WriteFile(name, make([]byte, 4<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		mapf func(string) ([]byte, func() error, error)
		want bool
	}{{"Map", Map, false}, {"MapWhole", MapWhole, true}} {
		data, unmap, err := c.mapf(name)
		if err != nil {
			t.Fatal(err)
		}
		flags := vmFlags(t, uintptr(unsafe.Pointer(unsafe.SliceData(data))))
		if got := strings.Contains(" "+strings.Join(flags, " ")+" ", " hg "); got != c.want {
			t.Errorf("%s: marked for huge pages %v, want %v (VmFlags %v)", c.name, got, c.want, flags)
		}
		if err := unmap(); err != nil {
			t.Fatal(err)
		}
	}
}
