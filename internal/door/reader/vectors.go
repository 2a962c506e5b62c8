package reader

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/kbqdev/kbq/artifact"
	"github.com/kbqdev/kbq/embedding"
	"github.com/kbqdev/kbq/query"
)

// An Embedder embeds queries for the semantic channel of a search, with
// the model the artifact's vectors were made by.
type Embedder struct {
	Getenv func(string) string
	// Net does what needs the network; without it, an artifact whose
	// vectors come from an endpoint is searched lexically.
	Net Network
	// Warn, when set, is told why a search that would have been hybrid by
	// default is lexical: the semantic channel could not run. Without it,
	// that is an error.
	Warn func(error)
	// Once says the process embeds one query and ends, as kbq search
	// does: each model is loaded for that query alone and released as
	// soon as its vector is made, while the search goes on with the rest,
	// rather than by the process's exit after the output (a fresh hybrid
	// search at 3,088 documents, median 12.11 → 11.40 ms). A model whose
	// query is never embedded is left to the exit. Without Once, a model
	// stays loaded for the process's next query.
	Once bool
}

// Network embeds queries with an endpoint and downloads models.
type Network interface {
	// EmbedQuery embeds text with the OpenAI-compatible endpoint id names.
	EmbedQuery(ctx context.Context, id artifact.Embeddings, text string) ([]float32, error)
	// FetchModel downloads the catalog's model called name into models.
	FetchModel(ctx context.Context, models, name string) error
}

// encoders keeps the models a process has loaded, by directory: a server
// loads each once.
var encoders struct {
	sync.Mutex
	byDir map[string]*embedding.Encoder
}

// A Searched is what Vectorize embeds a query for: an artifact, several
// (query.Union), or a Backend.
type Searched interface {
	Mode(req query.Request) string
	Models() []artifact.Embeddings
}

// Vectorize gives req its query's vector when its mode needs one: made
// now, or, with the local model, made by the search while it does what
// needs no vector (req.Embed). Over artifacts of several models the query
// is embedded once by each (req.Vectors); one that cannot embed it leaves
// its artifacts to their words, and e.Warn is told why. When the mode is
// hybrid by default and no vector can be had, the search goes on
// lexically and e.Warn is told why; a mode asked for is an error.
func (e Embedder) Vectorize(ctx context.Context, ix Searched, req *query.Request) error {
	mode := ix.Mode(*req)
	if mode == query.ModeLexical || req.Vector != nil || req.Embed != nil {
		return nil
	}
	models := ix.Models()
	var first *artifact.Embeddings
	if len(models) > 0 {
		first = &models[0]
	}
	embed, local, err := e.embedder(ctx, first, req)
	if err == nil && !local {
		req.Vector, err = embed(ctx)
	} else if err == nil {
		req.Embed = embed
	}
	for _, m := range models[min(1, len(models)):] {
		v, err := e.embedOnce(ctx, m, req)
		if err != nil {
			if ctx.Err() != nil {
				return err
			}
			if e.Warn != nil {
				e.Warn(err)
				req.Notes = append(req.Notes, "the artifacts of "+m.Model+" were searched by words only: "+err.Error())
			}
			continue
		}
		req.Vectors = append(req.Vectors, query.ModelVector{Model: m, Vector: v})
	}
	if err != nil && len(req.Vectors) > 0 && e.Warn != nil && ctx.Err() == nil {
		e.Warn(err) // the other models' artifacts are still searched by meaning
		req.Notes = append(req.Notes, "the artifacts of "+first.Model+" were searched by words only: "+err.Error())
		return nil
	}
	if err != nil {
		if req.Mode != "" || e.Warn == nil || ctx.Err() != nil {
			return err
		}
		e.Warn(err)
		req.Notes = append(req.Notes, "searched by words only: "+err.Error())
		req.Mode = query.ModeLexical
	}
	return nil
}

// embedOnce embeds req's query with model m, now.
func (e Embedder) embedOnce(ctx context.Context, m artifact.Embeddings, req *query.Request) ([]float32, error) {
	embed, _, err := e.embedder(ctx, &m, req)
	if err != nil {
		return nil, err
	}
	return embed(ctx)
}

// embedder returns what embeds req's query with the artifact's model, and
// whether it runs in this process.
func (e Embedder) embedder(ctx context.Context, want *artifact.Embeddings, req *query.Request) (func(context.Context) ([]float32, error), bool, error) {
	if want == nil {
		return nil, false, fmt.Errorf("--mode %s: %w; build one with vectors (kbc build --embed MODEL), or search with --mode lexical", req.Mode, query.ErrNoVectors)
	}
	text := req.Query
	switch want.Provider {
	case "local":
	case "openai":
		if e.Net == nil {
			return nil, false, fmt.Errorf("the artifact's vectors come from the endpoint %s, which this program cannot reach; search with --mode lexical", want.URL)
		}
		return func(ctx context.Context) ([]float32, error) {
			v, err := e.Net.EmbedQuery(ctx, *want, text)
			if err == nil && len(v) != want.Dims {
				err = fmt.Errorf("the endpoint %s gave a vector of %d values for the query, where the artifact's have %d: it serves another model; rebuild the artifact", want.URL, len(v), want.Dims)
			}
			return v, err
		}, false, nil
	default:
		return nil, false, fmt.Errorf("the artifact's vectors come from provider %q, which this kbq does not know; search with --mode lexical, or upgrade kbq", want.Provider)
	}
	enc, err := e.encoder(ctx, *want)
	if err != nil {
		return nil, false, err
	}
	embed := func(ctx context.Context) ([]float32, error) {
		vecs, err := enc.Embed(ctx, []string{text})
		if err != nil {
			return nil, err
		}
		return vecs[0], nil
	}
	if e.Once {
		embed = releasing(embed, enc.Close)
	}
	return embed, true, nil
}

// releasing returns embed made to run once, release called in the
// background as soon as it has; later calls return the first's outcome.
func releasing(embed func(context.Context) ([]float32, error), release func() error) func(context.Context) ([]float32, error) {
	var (
		mu   sync.Mutex
		done bool
		v    []float32
		err  error
	)
	return func(ctx context.Context) ([]float32, error) {
		mu.Lock()
		defer mu.Unlock()
		if !done {
			v, err = embed(ctx)
			done = true
			go release()
		}
		return v, err
	}
}

// encoder opens, or finds open, the model the artifact names, downloading
// it first when it is missing and kbq knows where from.
func (e Embedder) encoder(ctx context.Context, want artifact.Embeddings) (*embedding.Encoder, error) {
	models, err := embedding.ModelsDir(e.Getenv)
	if err != nil {
		return nil, err
	}
	dir, err := embedding.Find(models, want.Model)
	if errors.Is(err, embedding.ErrNoModel) {
		if _, known := embedding.Known(want.Model); known && e.Net != nil {
			if err := e.Net.FetchModel(ctx, models, want.Model); err != nil {
				return nil, err
			}
			dir, err = embedding.Find(models, want.Model)
		}
	}
	if errors.Is(err, embedding.ErrNoModel) {
		return nil, fmt.Errorf("the artifact's vectors were made by the model %s, which is not in %s: put it there (or set KBQ_MODELS), or search with --mode lexical", want.Model, models)
	}
	if err != nil {
		return nil, err
	}
	var enc *embedding.Encoder
	if e.Once {
		enc, err = loadModel(dir)
	} else {
		enc, err = sharedModel(dir)
	}
	if err != nil {
		return nil, err
	}
	if got := enc.Info(); got.Hash != want.Hash || got.Dims != want.Dims {
		if e.Once {
			enc.Close()
		}
		return nil, fmt.Errorf("%s holds another %s (hash %s, %d dimensions) than the one the artifact's vectors were made by (hash %s, %d): rebuild the artifact, or search with --mode lexical",
			dir, want.Model, got.Hash, got.Dims, want.Hash, want.Dims)
	}
	return enc, nil
}

// sharedModel is the model in dir as the process keeps it for every
// query, loaded by the first.
func sharedModel(dir string) (*embedding.Encoder, error) {
	encoders.Lock()
	defer encoders.Unlock()
	if enc := encoders.byDir[dir]; enc != nil {
		return enc, nil
	}
	enc, err := loadModel(dir)
	if err != nil {
		return nil, err
	}
	if encoders.byDir == nil {
		encoders.byDir = map[string]*embedding.Encoder{}
	}
	encoders.byDir[dir] = enc
	return enc, nil
}

// loadModel loads the model in dir for queries: with the weights in
// eight bits, half the bytes a fresh process must read, within a cosine
// of 0.9995 (0.9996 with the tokens' values in eight bits too, where the
// processor multiplies bytes).
func loadModel(dir string) (*embedding.Encoder, error) {
	enc, err := embedding.LoadQuantized(dir)
	if err != nil {
		return nil, fmt.Errorf("load the model in %s: %w", dir, err)
	}
	return enc, nil
}
