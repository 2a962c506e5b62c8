// Package growstack gives a goroutine the stack it will need in one step.
//
// A goroutine's stack starts at 2 KiB and doubles whenever a call needs
// more, each time copying the stack and adjusting its pointers with the
// binary's stack maps. A short-lived command that goes deep (parsing a
// query, reading an artifact, searching it) pays for four or five such
// copies, and for the page faults of reading the stack maps of a large
// binary: about 0.15 ms of a 4 ms kbq search. One frame of Size bytes,
// early, while the stack is shallow and cheap to copy, grows it once.
package growstack

// Size is the frame Grow places on the stack: a goroutine that calls it
// has a stack of 32 KiB or more from then on (until the collector shrinks
// a stack that goes unused).
const Size = 24 << 10

// sink and at keep the compiler from dropping Grow's frame.
var (
	sink byte
	at   = 1
)

// Grow grows the calling goroutine's stack to hold Size more bytes.
//
//go:noinline
func Grow() {
	var frame [Size]byte
	frame[at] = sink + 1
	sink = frame[at]
}
