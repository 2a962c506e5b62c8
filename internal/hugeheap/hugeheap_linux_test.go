package hugeheap

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"
)

// adviseds returns the sizes of this process's mappings marked for huge
// pages ("hg" among their VmFlags in /proc/self/smaps).
func adviseds(t *testing.T) []int {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	var sizes []int
	size := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		switch {
		case len(fields) == 3 && fields[0] == "Size:":
			size, _ = strconv.Atoi(fields[1])
			size <<= 10
		case len(fields) > 0 && fields[0] == "VmFlags:":
			for _, fl := range fields[1:] {
				if fl == "hg" {
					sizes = append(sizes, size)
				}
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return sizes
}

func TestGrowAdvisesTheHeap(t *testing.T) {
	if _, err := os.Stat("/sys/kernel/mm/transparent_hugepage/enabled"); err != nil {
		t.Skip("no transparent huge pages here:", err)
	}
	if got := adviseds(t); len(got) != 0 {
		t.Fatalf("before Grow, mappings marked for huge pages: %v", got)
	}
	const n = 64 << 20
	Grow(n)
	sizes := adviseds(t)
	largest := 0
	for _, s := range sizes {
		largest = max(largest, s)
	}
	if largest < n {
		t.Fatalf("after Grow(%d), the largest mapping marked for huge pages holds %d bytes (all: %v)", n, largest, sizes)
	}
	Grow(n)
	if again := adviseds(t); len(again) != len(sizes) {
		t.Errorf("a second Grow marked more: %v, then %v", sizes, again)
	}
}
