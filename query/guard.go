package query

import (
	"fmt"
	"runtime/debug"

	"github.com/kbqdev/kbq/artifact"
)

// A damaged file of an artifact can make the readers of its formats (the
// segments' dictionaries and postings, kbq's own tables) index out of
// range: such a panic, and a fault reading a mapped file that shrank, is
// an error of the read that met it (artifact.ErrCorrupt), never the end of
// the process. Every exported read of an Index, and every goroutine one
// starts, runs under its guard. A read that panicked may have left a
// segment's lock held, so the Index is broken from then on: every later
// read returns the same error at once instead of waiting on that lock.

// guarded runs f under ix's guard.
func guarded[T any](ix *Index, f func() (T, error)) (v T, err error) {
	if b := ix.broken.Load(); b != nil {
		return v, *b
	}
	defer ix.guard(&err)
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	return f()
}

// guard, deferred, turns a panic into *err and breaks ix.
func (ix *Index) guard(err *error) {
	r := recover()
	if r == nil {
		return
	}
	e := fmt.Errorf("%w: reading the index failed (%v): rebuild the artifact with kbc build", artifact.ErrCorrupt, r)
	ix.broken.CompareAndSwap(nil, &e)
	*err = *ix.broken.Load()
}
