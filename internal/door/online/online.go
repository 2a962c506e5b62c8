// Package online is the network as kbq's front doors use it: queries
// embedded by the endpoint an artifact names, with the key the user's trust
// configuration gives it and a circuit breaker per endpoint, and models
// downloaded on first use with progress on stderr.
package online

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/kbqdev/kbq/artifact"
	"github.com/kbqdev/kbq/embedding"
	"github.com/kbqdev/kbq/embedding/remote"
	"github.com/kbqdev/kbq/internal/cli"
	"github.com/kbqdev/kbq/internal/door/reader"
	"github.com/kbqdev/kbq/internal/trust"
	"github.com/kbqdev/kbq/internal/units"
)

// queryTimeout bounds the embedding of one query by an endpoint, retries
// included: a search waits for it.
const queryTimeout = 20 * time.Second

// QueryEmbedder embeds the queries of kbq's commands and servers, reaching
// endpoints and downloading models itself; why a search that would have
// been hybrid is lexical is a note of its response (query.Request.Notes),
// which every door shows.
func QueryEmbedder(s *cli.Streams) reader.Embedder {
	return reader.Embedder{Getenv: s.Getenv, Net: &online{s: s}, Warn: func(error) {}}
}

// online is the Network of a process that may use it: endpoints are called
// and models downloaded with progress on s.Err. The user's trust
// configuration is read once, at the first query that needs it.
type online struct {
	s         *cli.Streams
	trustOnce sync.Once
	trust     *trust.Config
}

func (n *online) trusted() *trust.Config {
	n.trustOnce.Do(func() {
		n.trust = trust.Must(n.s.Getenv, func(err error) { fmt.Fprintf(n.s.Err, "kbq: %v\n", err) })
	})
	return n.trust
}

func (n *online) EmbedQuery(ctx context.Context, id artifact.Embeddings, text string) (v []float32, err error) {
	dir := breakerDir(n.s.Getenv)
	if err := endpointBreakers.open(dir, id.URL); err != nil {
		return nil, err
	}
	caller := ctx
	defer func() {
		if caller.Err() == nil { // a caller that gave up says nothing of the endpoint
			endpointBreakers.done(dir, id.URL, err)
		}
	}()
	ctx, cancel := context.WithTimeout(ctx, queryTimeout)
	defer cancel()
	// The artifact names the endpoint, never the key: that goes only to
	// an endpoint the user named (package trust).
	g := n.trusted().Key(trust.Embeddings, id.URL, false)
	c := &remote.Client{URL: id.URL, Model: id.Model, Dims: id.Dims, Key: g.Key, KeyEnv: g.Env, Advice: g.Advice, Timeout: queryTimeout / 2, Retries: 2}
	vecs, err := c.Embed(ctx, []string{text})
	if err != nil {
		return nil, err
	}
	return vecs[0], nil
}

func (n *online) FetchModel(ctx context.Context, models, name string) error {
	d, ok := embedding.Known(name)
	if !ok {
		return fmt.Errorf("kbq does not know where to download the model %s", name)
	}
	fmt.Fprintf(n.s.Err, "kbq: downloading the model %s (%s, %s) from %s into %s\n", d.Name, units.Bytes(d.Size), d.License, d.URL, models)
	progress := cli.NewProgress(n.s, "downloading "+d.Name+" (KiB)")
	defer progress.Done()
	_, err := remote.Fetch(ctx, nil, models, d, func(done, total int64) { progress.Update(int(done>>10), int(total>>10)) })
	return err
}
