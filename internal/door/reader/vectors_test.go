package reader

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/kbqdev/kbq/artifact"
	"github.com/kbqdev/kbq/embedding"
	"github.com/kbqdev/kbq/embedding/embeddingtest"
	"github.com/kbqdev/kbq/query"
)

// oneModel is a Searched of one artifact whose vectors model made.
type oneModel struct{ model artifact.Embeddings }

func (o oneModel) Mode(req query.Request) string { return query.ModeHybrid }
func (o oneModel) Models() []artifact.Embeddings { return []artifact.Embeddings{o.model} }

// An embedder of one query embeds it once, releases the model in the
// background, and answers a second call with the first's outcome; a
// shared one keeps the model for the next query. Both make the same
// vector.
func TestOnceReleasesTheModel(t *testing.T) {
	models := t.TempDir()
	dir := filepath.Join(models, "tiny")
	if err := embeddingtest.Default.Write(dir); err != nil {
		t.Fatal(err)
	}
	enc, err := embedding.LoadQuantized(dir)
	if err != nil {
		t.Fatal(err)
	}
	info := enc.Info()
	enc.Close()
	src := oneModel{artifact.Embeddings{Provider: "local", Model: "tiny", Hash: info.Hash, Dims: info.Dims}}
	getenv := func(k string) string {
		if k == "KBQ_MODELS" {
			return models
		}
		return ""
	}
	ctx := context.Background()
	embed := func(e Embedder) []float32 {
		t.Helper()
		req := query.Request{Query: "pipeline objects"}
		if err := e.Vectorize(ctx, src, &req); err != nil {
			t.Fatal(err)
		}
		if req.Embed == nil {
			t.Fatal("a local model's query is left to the search to embed, and is not")
		}
		v, err := req.Embed(ctx)
		if err != nil {
			t.Fatal(err)
		}
		again, err := req.Embed(ctx)
		if err != nil || !slices.Equal(v, again) {
			t.Fatalf("a second call: %v, %v; want the first's vector", again, err)
		}
		return v
	}

	once := embed(Embedder{Getenv: getenv, Once: true})
	encoders.Lock()
	kept := encoders.byDir[dir]
	encoders.Unlock()
	if kept != nil {
		t.Error("an embedder of one query kept its model for the process")
	}
	shared := embed(Embedder{Getenv: getenv})
	if !slices.Equal(once, shared) {
		t.Error("the two embedders made different vectors")
	}
	encoders.Lock()
	kept = encoders.byDir[dir]
	delete(encoders.byDir, dir)
	encoders.Unlock()
	if kept == nil {
		t.Error("a shared embedder did not keep its model")
	} else {
		kept.Close()
	}
}

func TestReleasingRunsOnce(t *testing.T) {
	calls := 0
	released := make(chan struct{}, 2)
	fail := errors.New("the endpoint is down")
	embed := releasing(func(context.Context) ([]float32, error) {
		calls++
		return []float32{1}, fail
	}, func() error {
		released <- struct{}{}
		return nil
	})
	for range 3 {
		if v, err := embed(context.Background()); !slices.Equal(v, []float32{1}) || err != fail {
			t.Fatalf("got %v, %v; want the first call's outcome", v, err)
		}
	}
	if calls != 1 {
		t.Errorf("embedded %d times, want once", calls)
	}
	select {
	case <-released:
	case <-time.After(10 * time.Second):
		t.Fatal("the model was not released")
	}
	time.Sleep(10 * time.Millisecond)
	if len(released) != 0 {
		t.Error("the model was released twice")
	}
}
