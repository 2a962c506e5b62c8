package growstack

import (
	"testing"
	"unsafe"
)

// deep uses about n × 256 bytes of stack.
//
//go:noinline
func deep(n int) byte {
	var pad [200]byte
	pad[n%len(pad)] = byte(n)
	if n == 0 {
		return pad[0]
	}
	return deep(n-1) + pad[n%len(pad)]
}

// moves reports whether a call using about 16 KiB of stack moved the
// goroutine's stack, run on a new goroutine after grow: a local's
// address changes when the runtime copies the stack to grow it.
func moves(grow func()) bool {
	done := make(chan bool)
	go func() {
		grow()
		var local int
		before := uintptr(unsafe.Pointer(&local))
		deep(64)
		done <- uintptr(unsafe.Pointer(&local)) != before
	}()
	return <-done
}

func TestGrowMakesRoom(t *testing.T) {
	if !moves(func() {}) {
		t.Fatal("a new goroutine's stack did not move for a 16 KiB call: the probe sees nothing")
	}
	if moves(Grow) {
		t.Error("after Grow, a 16 KiB call still moved the stack")
	}
}
