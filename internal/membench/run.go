package membench

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/kbqdev/kbq/compiler"
	"github.com/kbqdev/kbq/embedding"
	"github.com/kbqdev/kbq/internal/testkb"
	"github.com/kbqdev/kbq/query"
)

// Build compiles each project of b into dir/NAME, with a vector per chunk
// from enc when it is not nil, as kbc build does, and opens it with
// ranking. The caller closes the indexes.
func Build(ctx context.Context, b *Bench, dir string, enc *embedding.Encoder, ranking query.Ranking) (map[string]*query.Index, error) {
	indexes := map[string]*query.Index{}
	fail := func(err error) (map[string]*query.Index, error) {
		for _, ix := range indexes {
			ix.Close()
		}
		return nil, err
	}
	for _, p := range b.Projects {
		opts := compiler.BuildOptions{Out: filepath.Join(dir, p.Name)}
		if enc != nil {
			opts.Embedder = enc
		}
		if _, err := compiler.Build(ctx, testkb.Files(p.Files), opts); err != nil {
			return fail(fmt.Errorf("%s: %w", p.Name, err))
		}
		ix, err := query.OpenWith(opts.Out, ranking)
		if err != nil {
			return fail(err)
		}
		indexes[p.Name] = ix
	}
	return indexes, nil
}

// Search asks the questions of indexes in mode, as kbq search does: the
// ten best results, each question embedded with enc in the modes that
// rank by meaning, the relevance floors scaled by floor (as
// query.Request.Floor).
func Search(ctx context.Context, indexes map[string]*query.Index, enc *embedding.Encoder, mode string, floor float64) Searcher {
	return func(project, q string) ([]string, error) {
		req := query.Request{Query: q, N: 10, Mode: mode, Floor: floor}
		if mode != query.ModeLexical {
			if enc == nil {
				return nil, fmt.Errorf("mode %s needs a model", mode)
			}
			v, err := enc.Embed(ctx, []string{q})
			if err != nil {
				return nil, err
			}
			req.Vector = v[0]
		}
		resp, err := indexes[project].Search(ctx, req)
		if err != nil {
			return nil, err
		}
		var out []string
		for _, r := range resp.Results {
			out = append(out, r.Path)
		}
		return out, nil
	}
}
