package compiler

import (
	"context"

	"golang.org/x/sync/errgroup"
)

// orderedMap calls fn on every item using workers goroutines and hands the
// results to sink in item order, holding at most window finished results in
// memory. It stops at the first error, from fn or sink, or when ctx ends.
// With one worker it runs serially on the calling goroutine.
func orderedMap[T, R any](ctx context.Context, items []T, workers, window int,
	fn func(T) (R, error), sink func(R) error) error {
	if workers <= 1 {
		for _, it := range items {
			if err := ctx.Err(); err != nil {
				return err
			}
			r, err := fn(it)
			if err != nil {
				return err
			}
			if err := sink(r); err != nil {
				return err
			}
		}
		return nil
	}
	window = max(window, workers)
	g, ctx := errgroup.WithContext(ctx)
	type job struct {
		item T
		out  chan R
	}
	jobs := make(chan job)
	pending := make(chan chan R, window) // results in item order; its capacity bounds memory
	g.Go(func() error {
		defer close(jobs)
		defer close(pending)
		for _, it := range items {
			out := make(chan R, 1)
			select {
			case pending <- out:
			case <-ctx.Done():
				return ctx.Err()
			}
			select {
			case jobs <- job{it, out}:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return nil
	})
	for range workers {
		g.Go(func() error {
			for j := range jobs {
				r, err := fn(j.item)
				if err != nil {
					return err
				}
				j.out <- r
			}
			return nil
		})
	}
	g.Go(func() error {
		for out := range pending {
			select {
			case r := <-out:
				if err := sink(r); err != nil {
					return err
				}
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return nil
	})
	return g.Wait()
}
