package kbqserve

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/kbqdev/kbq/artifact"
	"github.com/kbqdev/kbq/embedding"
	"github.com/kbqdev/kbq/embedding/remote"
	"github.com/kbqdev/kbq/internal/answer"
	"github.com/kbqdev/kbq/internal/cli"
	"github.com/kbqdev/kbq/internal/units"
)

// queryTimeout bounds the embedding of one query by an endpoint, retries
// included: a search waits for it.
const queryTimeout = 20 * time.Second

// network embeds queries with endpoints and downloads models itself; kbq
// hands both to kbq-serve (EmbedQueryCommand, FetchModelCommand).
type network struct{ s *cli.Streams }

// embedder is the query embedder of kbq-serve's servers.
func embedder(s *cli.Streams) answer.Embedder {
	return answer.Embedder{Getenv: s.Getenv, Net: network{s}, Warn: func(err error) {
		fmt.Fprintf(s.Err, "kbq: searching lexically only: %v\n", err)
	}}
}

func (n network) EmbedQuery(ctx context.Context, id artifact.Embeddings, text string) ([]float32, error) {
	ctx, cancel := context.WithTimeout(ctx, queryTimeout)
	defer cancel()
	key, keyEnv := remote.Key(n.s.Getenv, id.KeyEnv)
	c := &remote.Client{URL: id.URL, Model: id.Model, Dims: id.Dims, Key: key, KeyEnv: keyEnv, Timeout: queryTimeout / 2, Retries: 2}
	vecs, err := c.Embed(ctx, []string{text})
	if err != nil {
		return nil, err
	}
	return vecs[0], nil
}

func (n network) FetchModel(ctx context.Context, models, name string) error {
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

// Names of the commands kbq runs kbq-serve with for what needs the
// network.
const (
	EmbedQueryCommand = "embed-query"
	FetchModelCommand = "fetch-model"
)

func newEmbedQueryCommand(s *cli.Streams) *cli.Command {
	var id artifact.Embeddings
	return &cli.Command{
		Name:      EmbedQueryCommand,
		Usage:     "embed the query on stdin with an OpenAI-compatible endpoint, for kbq",
		UsageText: "kbq-serve embed-query --url URL --model MODEL --dims N [--key-env NAME] < query",
		Hidden:    true,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "url", Destination: &id.URL},
			&cli.StringFlag{Name: "model", Destination: &id.Model},
			&cli.IntFlag{Name: "dims", Destination: &id.Dims},
			&cli.StringFlag{Name: "key-env", Destination: &id.KeyEnv},
		},
		Action: func(c *cli.Context) error {
			if id.URL == "" || id.Model == "" || id.Dims <= 0 {
				return cli.Usagef("want --url, --model and --dims")
			}
			text, err := io.ReadAll(io.LimitReader(s.In, 1<<20))
			if err != nil {
				return err
			}
			v, err := network{s}.EmbedQuery(c.Context, id, strings.TrimSuffix(string(text), "\n"))
			if err != nil {
				return err
			}
			return json.NewEncoder(s.Out).Encode(v)
		},
	}
}

func newFetchModelCommand(s *cli.Streams) *cli.Command {
	return &cli.Command{
		Name:      FetchModelCommand,
		Usage:     "download a model kbq knows into the models directory ($KBQ_MODELS)",
		UsageText: "kbq-serve fetch-model NAME",
		Hidden:    true,
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return cli.Usagef("want the name of one model")
			}
			models, err := embedding.ModelsDir(s.Getenv)
			if err != nil {
				return err
			}
			return network{s}.FetchModel(c.Context, models, c.Args().First())
		},
	}
}
