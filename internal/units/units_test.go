package units

import "testing"

func TestBytes(t *testing.T) {
	for n, want := range map[int64]string{
		0: "0 bytes", 1: "1 byte", 300: "300 bytes", 1024: "1 KiB", 7 << 10: "7 KiB", 9933: "9.7 KiB",
		5 << 20: "5 MiB", 5<<20 + 1<<19: "5.5 MiB", 2 << 30: "2 GiB", 3<<30 + 1<<29: "3.5 GiB",
	} {
		if got := Bytes(n); got != want {
			t.Errorf("Bytes(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestCount(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 52300: "52,300", 1234567: "1,234,567", -4500: "-4,500"} {
		if got := Count(n); got != want {
			t.Errorf("Count(%d) = %q, want %q", n, got, want)
		}
	}
}
