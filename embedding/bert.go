package embedding

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sync"

	"github.com/kbqdev/kbq/internal/mmap"
)

// MaxTokens is the most tokens of a text the encoder reads, [CLS] and
// [SEP] included, as sentence-transformers configures all-MiniLM-L6-v2:
// the rest of a longer text is cut.
const MaxTokens = 256

// Files a model directory holds.
const (
	ConfigFile    = "config.json"
	TokenizerFile = "tokenizer.json"
)

// weightFiles are the names a model's weights go by, in order of preference.
var weightFiles = []string{"model.safetensors", "model.fp16.safetensors"}

// bertConfig is the part of a config.json the encoder reads.
type bertConfig struct {
	ModelType    string  `json:"model_type"`
	Hidden       int     `json:"hidden_size"`
	Layers       int     `json:"num_hidden_layers"`
	Heads        int     `json:"num_attention_heads"`
	Intermediate int     `json:"intermediate_size"`
	MaxPositions int     `json:"max_position_embeddings"`
	Vocab        int     `json:"vocab_size"`
	TypeVocab    int     `json:"type_vocab_size"`
	Eps          float64 `json:"layer_norm_eps"`
	Act          string  `json:"hidden_act"`
}

func (c bertConfig) check() error {
	if c.ModelType != "" && c.ModelType != "bert" {
		return fmt.Errorf("model_type is %q; only BERT encoders are supported", c.ModelType)
	}
	if c.Act != "" && c.Act != "gelu" {
		return fmt.Errorf("hidden_act is %q; only gelu is supported", c.Act)
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"hidden_size", c.Hidden}, {"num_hidden_layers", c.Layers}, {"num_attention_heads", c.Heads},
		{"intermediate_size", c.Intermediate}, {"max_position_embeddings", c.MaxPositions}, {"vocab_size", c.Vocab}} {
		if f.v <= 0 || f.v > 1<<20 {
			return fmt.Errorf("%s is %d", f.name, f.v)
		}
	}
	if c.Hidden%c.Heads != 0 {
		return fmt.Errorf("hidden_size %d is not a multiple of num_attention_heads %d", c.Hidden, c.Heads)
	}
	return nil
}

// An Encoder embeds texts with a BERT sentence model: the mean of its last
// layer's token vectors, normalised to unit length. It is safe for
// concurrent use.
type Encoder struct {
	cfg       bertConfig
	tok       *Tokenizer
	maxTokens int

	words   tensor    // word embeddings, rows converted as tokens need them
	pos     tensor    // converted a row at a time: a query needs a few
	typ     []float32 // token type 0
	embNorm normParams
	layers  []bertLayer

	name, hash string

	scratch sync.Pool
	unmap   func() error
	warming sync.WaitGroup
}

type normParams struct{ gamma, beta []float32 }

type bertLayer struct {
	query, key, value matrix
	qkvBias           []float32 // of the query, key and value, one after the other
	attnOut           matrix
	attnOutBias       []float32
	attnNorm          normParams
	inter             matrix
	interBias         []float32
	out               matrix
	outBias           []float32
	outNorm           normParams
}

// Load opens the model in dir: config.json, tokenizer.json and the weights
// in safetensors (model.safetensors, or model.fp16.safetensors). The
// weights file is mapped, not read: only the word vectors a text needs are
// ever converted.
func Load(dir string) (*Encoder, error) {
	var cfg bertConfig
	configData, err := readJSON(filepath.Join(dir, ConfigFile), &cfg)
	if err != nil {
		return nil, err
	}
	if err := cfg.check(); err != nil {
		return nil, fmt.Errorf("%s: %v", filepath.Join(dir, ConfigFile), err)
	}
	tokPath := filepath.Join(dir, TokenizerFile)
	var weightsPath string
	for _, name := range weightFiles {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			weightsPath = filepath.Join(dir, name)
			break
		}
	}
	if weightsPath == "" {
		if _, err := os.Stat(tokPath); err != nil {
			return nil, missing(err)
		}
		return nil, fmt.Errorf("%s holds no weights: want %s or %s", dir, weightFiles[0], weightFiles[1])
	}
	key := cacheKey{config: configData, weightsName: filepath.Base(weightsPath)}
	key.tokenizer, err = stampOf(tokPath)
	if err != nil {
		return nil, missing(err)
	}
	if key.weights, err = stampOf(weightsPath); err != nil {
		return nil, missing(err)
	}
	c, unmapCache, cacheErr := readCache(dir, key)
	var tokData []byte
	if cacheErr != nil {
		if tokData, err = os.ReadFile(tokPath); err != nil {
			return nil, missing(err)
		}
		if c.tok, err = ParseTokenizer(tokData); err != nil {
			return nil, fmt.Errorf("%s: %v", tokPath, err)
		}
		if err := c.tok.fits(cfg.Vocab); err != nil {
			return nil, fmt.Errorf("%s: %v", tokPath, err)
		}
	}
	raw, unmapWeights, err := mmap.Map(weightsPath)
	if err != nil {
		unmapCache()
		return nil, err
	}
	unmap := func() error { unmapCache(); return unmapWeights() }
	e, err := newEncoder(cfg, c.tok, raw, weightsPath)
	if err != nil {
		unmap()
		return nil, err
	}
	e.unmap = unmap
	abs, err := filepath.Abs(dir)
	if err != nil {
		abs = dir
	}
	e.name, e.hash = filepath.Base(abs), c.hash
	if cacheErr != nil {
		e.hash = fingerprint(configData, tokData, raw)
		writeCache(dir, key, cached{tok: c.tok, hash: e.hash})
	}
	return e, nil
}

func readJSON(path string, v any) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, missing(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return data, nil
}

// missing explains a model file that is not there.
func missing(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) && errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("%s is missing: the model directory is incomplete", pe.Path)
	}
	return err
}

// newEncoder builds an encoder over the safetensors bytes raw.
func newEncoder(cfg bertConfig, tok *Tokenizer, raw []byte, file string) (*Encoder, error) {
	tensors, err := parseSafetensors(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", file, err)
	}
	w := &weights{tensors: tensors, file: file}
	h, in := cfg.Hidden, cfg.Intermediate
	e := &Encoder{
		cfg:       cfg,
		tok:       tok,
		maxTokens: min(MaxTokens, cfg.MaxPositions),
		words:     w.get("embeddings.word_embeddings.weight", cfg.Vocab, h),
		pos:       w.get("embeddings.position_embeddings.weight", cfg.MaxPositions, h),
		typ:       w.float("embeddings.token_type_embeddings.weight", max(cfg.TypeVocab, 1), h),
		embNorm:   w.norm("embeddings.LayerNorm", h),
	}
	for l := range cfg.Layers {
		p := fmt.Sprintf("encoder.layer.%d.", l)
		var q bertLayer
		q.query = w.matrix(p+"attention.self.query.weight", h, h)
		q.key = w.matrix(p+"attention.self.key.weight", h, h)
		q.value = w.matrix(p+"attention.self.value.weight", h, h)
		q.qkvBias = append(append(w.float(p+"attention.self.query.bias", h),
			w.float(p+"attention.self.key.bias", h)...),
			w.float(p+"attention.self.value.bias", h)...)
		q.attnOut = w.matrix(p+"attention.output.dense.weight", h, h)
		q.attnOutBias = w.float(p+"attention.output.dense.bias", h)
		q.attnNorm = w.norm(p+"attention.output.LayerNorm", h)
		q.inter = w.matrix(p+"intermediate.dense.weight", in, h)
		q.interBias = w.float(p+"intermediate.dense.bias", in)
		q.out = w.matrix(p+"output.dense.weight", h, in)
		q.outBias = w.float(p+"output.dense.bias", h)
		q.outNorm = w.norm(p+"output.LayerNorm", h)
		e.layers = append(e.layers, q)
	}
	if w.err != nil {
		return nil, w.err
	}
	// Ids past the word vectors are unknown words: the vocabulary of a
	// damaged cache must not index outside them.
	tok.limit = int32(cfg.Vocab)
	return e, nil
}

// matrix returns the weights name, rows × cols, as they are in the file
// when it holds half floats.
func (w *weights) matrix(name string, rows, cols int) matrix {
	t := w.get(name, rows, cols)
	if w.err != nil {
		return matrix{}
	}
	m := matrix{rows: rows, cols: cols}
	if t.dtype == "F16" {
		m.f16 = t.data
	} else {
		m.f32 = t.floats(nil)
	}
	return m
}

// norm reads a layer norm's weight and bias; older exports call them gamma
// and beta.
func (w *weights) norm(prefix string, h int) normParams {
	if _, ok := w.tensors[prefix+".gamma"]; ok {
		return normParams{w.float(prefix+".gamma", h), w.float(prefix+".beta", h)}
	}
	return normParams{w.float(prefix+".weight", h), w.float(prefix+".bias", h)}
}

// Dims is the length of the vectors the encoder returns.
func (e *Encoder) Dims() int { return e.cfg.Hidden }

// Tokenizer is the encoder's tokenizer.
func (e *Encoder) Tokenizer() *Tokenizer { return e.tok }

// Close releases the mapped weights; the encoder must not be used after.
// It waits for a warm-up that is still reading them.
func (e *Encoder) Close() error {
	e.warming.Wait()
	if e.unmap == nil {
		return nil
	}
	return e.unmap()
}

// Warm starts reading a byte of every page of the layers' weights in the
// background, so that the first text does not wait for the system to map
// them: on the 2-core machine that took 10 to 20 ms of a one-file build's
// single text. A process warms the model while it does other work.
func (e *Encoder) Warm() {
	e.warming.Add(1)
	go func() {
		defer e.warming.Done()
		for _, l := range e.layers {
			for _, m := range []*matrix{&l.query, &l.key, &l.value, &l.attnOut, &l.inter, &l.out} {
				mmap.Touch(m.f16)
			}
		}
	}()
}

// Embed returns the unit vector of each text. Texts are shared among the
// processor's cores; one text alone has its matrix products shared instead.
func (e *Encoder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	workers := min(parallelism(), len(texts))
	if workers <= 1 {
		for i, t := range texts {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			out[i] = e.embed(e.tok.Encode(t, e.maxTokens), parallelism())
		}
		return out, nil
	}
	next := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := range next {
				out[i] = e.embed(e.tok.Encode(texts[i], e.maxTokens), 1)
			}
		})
	}
	var err error
	for i := range texts {
		if err = ctx.Err(); err != nil {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	if err != nil {
		return nil, err
	}
	return out, nil
}

// buffers are one forward pass's working memory.
type buffers struct {
	x, qkv, ctx, tmp, inter, scores, vt []float32
}

func grow(s []float32, n int) []float32 {
	if cap(s) < n {
		return make([]float32, n)
	}
	return s[:n]
}

// spread calls f with the workers' shares of n items, [lo, hi), side by
// side; with one worker, at once.
func spread(n, workers int, f func(w, lo, hi int)) {
	if workers <= 1 || n <= 1 {
		f(0, 0, n)
		return
	}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() { f(w, n*w/workers, n*(w+1)/workers) })
	}
	wg.Wait()
}

// embed runs the encoder over ids and pools its output.
func (e *Encoder) embed(ids []int32, workers int) []float32 {
	h, heads := e.cfg.Hidden, e.cfg.Heads
	dh := h / heads
	n := len(ids)
	pad := (n + 7) &^ 7 // attention rows, padded for the vector kernel
	b, _ := e.scratch.Get().(*buffers)
	if b == nil {
		b = new(buffers)
	}
	defer e.scratch.Put(b)
	b.x = grow(b.x, n*h)
	b.qkv = grow(b.qkv, n*3*h)
	b.ctx = grow(b.ctx, n*h)
	b.tmp = grow(b.tmp, n*h)
	b.inter = grow(b.inter, n*e.cfg.Intermediate)
	// A long text's attention and activations are split over the workers
	// too: alone, they took as long as its matrix products.
	split := workers
	if n < 16 {
		split = 1
	}
	b.scores = grow(b.scores, split*n*pad)
	b.vt = grow(b.vt, split*dh*pad)
	clear(b.scores)
	clear(b.vt)

	for i, id := range ids {
		row := b.x[i*h : (i+1)*h]
		e.words.row(int(id), row)
		pos := b.tmp[:h]
		e.pos.row(i, pos)
		for j := range row {
			row[j] += pos[j] + e.typ[j]
		}
	}
	eps := float32(e.cfg.Eps)
	layerNorm(b.x, e.embNorm.gamma, e.embNorm.beta, eps)
	scale := float32(1 / math.Sqrt(float64(dh)))
	for _, l := range e.layers {
		linear(n, b.x, &l.query, l.qkvBias[:h], b.qkv, 3*h, workers)
		linear(n, b.x, &l.key, l.qkvBias[h:2*h], b.qkv[h:], 3*h, workers)
		linear(n, b.x, &l.value, l.qkvBias[2*h:], b.qkv[2*h:], 3*h, workers)
		attend := func(hd int, scores, vt []float32) {
			q, k, v := b.qkv[hd*dh:], b.qkv[h+hd*dh:], b.qkv[2*h+hd*dh:]
			matmulTStrided(n, n, dh, q, 3*h, k, 3*h, scores, pad, 1)
			for i := range n {
				row := scores[i*pad : i*pad+n]
				for j := range row {
					row[j] *= scale
				}
				softmax(row)
			}
			for j := range n {
				for d := range dh {
					vt[d*pad+j] = v[j*3*h+d]
				}
			}
			matmulTStrided(n, dh, pad, scores, pad, vt, pad, b.ctx[hd*dh:], h, 1)
		}
		spread(heads, split, func(w, lo, hi int) {
			for hd := lo; hd < hi; hd++ {
				attend(hd, b.scores[w*n*pad:(w+1)*n*pad], b.vt[w*dh*pad:(w+1)*dh*pad])
			}
		})
		linear(n, b.ctx, &l.attnOut, l.attnOutBias, b.tmp, h, workers)
		addInto(b.x, b.tmp)
		layerNorm(b.x, l.attnNorm.gamma, l.attnNorm.beta, eps)
		linear(n, b.x, &l.inter, l.interBias, b.inter, e.cfg.Intermediate, workers)
		spread(n, split, func(_, lo, hi int) {
			inter := b.inter[lo*e.cfg.Intermediate : hi*e.cfg.Intermediate]
			for i, v := range inter {
				inter[i] = gelu(v)
			}
		})
		linear(n, b.inter, &l.out, l.outBias, b.tmp, h, workers)
		addInto(b.x, b.tmp)
		layerNorm(b.x, l.outNorm.gamma, l.outNorm.beta, eps)
	}
	vec := make([]float32, h)
	for i := range n {
		addInto(vec, b.x[i*h:(i+1)*h])
	}
	for j := range vec {
		vec[j] /= float32(n)
	}
	normalize(vec)
	return vec
}

// linear sets y = x·wᵀ + bias for the n rows of x; rows of y are ldy
// apart.
func linear(n int, x []float32, w *matrix, bias, y []float32, ldy int, workers int) {
	w.mulT(n, x, y, ldy, workers)
	for i := range n {
		row := y[i*ldy : i*ldy+w.rows]
		for j := range row {
			row[j] += bias[j]
		}
	}
}

// addInto adds y to x, element by element.
func addInto(x, y []float32) {
	y = y[:len(x)]
	for i := range x {
		x[i] += y[i]
	}
}
