package kbqserve

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"time"

	"github.com/kbqdev/kbq/internal/door/reader"
	"github.com/kbqdev/kbq/query"
)

// How much of the machine searches may take: a query's own cost is
// bounded by the query package; these bound how many run at once and for
// how long, so that a flood of requests queues instead of piling up.
var (
	// searchSlots holds a token for each search running.
	searchSlots = make(chan struct{}, max(2, runtime.GOMAXPROCS(0)))
	// queueTimeout is how long a search waits for a slot.
	queueTimeout = 10 * time.Second
	// searchTimeout is how long a search may run.
	searchTimeout = 10 * time.Second
)

// errBusy means every search slot stayed taken for queueTimeout.
var errBusy = errors.New("the server is busy: too many searches at once")

// runSearch runs req on ix within a slot and the time a search may take.
func runSearch(ctx context.Context, ix reader.Backend, req query.Request) (*query.Response, error) {
	wait := time.NewTimer(queueTimeout)
	defer wait.Stop()
	select {
	case searchSlots <- struct{}{}:
	case <-wait.C:
		return nil, fmt.Errorf("%w (try again shortly)", errBusy)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-searchSlots }()
	ctx, cancel := context.WithTimeout(ctx, searchTimeout)
	defer cancel()
	resp, err := ix.Search(ctx, req)
	if errors.Is(err, context.DeadlineExceeded) {
		return nil, fmt.Errorf("%w: the search ran over %s; narrow the query", errBusy, searchTimeout)
	}
	return resp, err
}
