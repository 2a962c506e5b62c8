package answer

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/kbqdev/kbq/artifact"
	"github.com/kbqdev/kbq/embedding"
	"github.com/kbqdev/kbq/query"
)

// encoders keeps the models a process has loaded, by directory: a server
// loads each once.
var encoders struct {
	sync.Mutex
	byDir map[string]*embedding.Encoder
}

// Vectorize embeds req's query with the artifact's model when its mode
// needs a vector. The model is found by name in the models directory and
// must be the one the artifact's vectors were made with.
func Vectorize(ctx context.Context, ix *query.Index, getenv func(string) string, req *query.Request) error {
	if ix.Mode(*req) == query.ModeLexical || req.Vector != nil {
		return nil
	}
	want := ix.Manifest.Embeddings
	if want == nil {
		return fmt.Errorf("--mode %s: %w; build one with vectors (kbc build --embed MODEL), or search with --mode lexical", req.Mode, query.ErrNoVectors)
	}
	e, err := encoder(getenv, *want)
	if err != nil {
		return err
	}
	vecs, err := e.Embed(ctx, []string{req.Query})
	if err != nil {
		return err
	}
	req.Vector = vecs[0]
	return nil
}

// encoder opens, or finds open, the model the artifact names.
func encoder(getenv func(string) string, want artifact.Embeddings) (*embedding.Encoder, error) {
	if want.Provider != "local" {
		return nil, fmt.Errorf("the artifact's vectors come from provider %q, which this kbq cannot query; search with --mode lexical", want.Provider)
	}
	models, err := embedding.ModelsDir(getenv)
	if err != nil {
		return nil, err
	}
	dir, err := embedding.Find(models, want.Model)
	if errors.Is(err, embedding.ErrNoModel) {
		return nil, fmt.Errorf("the artifact's vectors were made by the model %s, which is not in %s: put it there (or set KBQ_MODELS), or search with --mode lexical", want.Model, models)
	}
	if err != nil {
		return nil, err
	}
	encoders.Lock()
	defer encoders.Unlock()
	e := encoders.byDir[dir]
	if e == nil {
		if e, err = embedding.Load(dir); err != nil {
			return nil, fmt.Errorf("load the model in %s: %w", dir, err)
		}
		if encoders.byDir == nil {
			encoders.byDir = map[string]*embedding.Encoder{}
		}
		encoders.byDir[dir] = e
	}
	if got := e.Info(); got.Hash != want.Hash || got.Dims != want.Dims {
		return nil, fmt.Errorf("%s holds another %s (hash %s, %d dimensions) than the one the artifact's vectors were made by (hash %s, %d): rebuild the artifact, or search with --mode lexical",
			dir, want.Model, got.Hash, got.Dims, want.Hash, want.Dims)
	}
	return e, nil
}
