package embedding

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

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
func Load(dir string) (*Encoder, error) { return load(dir, false) }

// LoadQuantized is Load with the layers' weights in eight bits, a scale
// per group of 32 (quant.go), kept in the model's cache: half the bytes of
// half floats. A process that embeds one query spends most of its time
// reading the weights for the first time, so this is the encoder for
// queries; vectors stay within a cosine of 0.9995 of Load's. Where the
// processor multiplies bytes (int8.go), the tokens' values are put in
// eight bits too, which halves the products' time for a cosine of 0.9996
// on real queries.
func LoadQuantized(dir string) (*Encoder, error) { return load(dir, true) }

// modelFiles are a model directory's files, as load finds them.
type modelFiles struct {
	cfg                  bertConfig
	config               []byte // config.json
	tokPath, weightsPath string
	key                  cacheKey // of a cache made from these files
}

// findFiles reads config.json in dir and finds the model's other files.
func findFiles(dir string) (modelFiles, error) {
	var f modelFiles
	var err error
	if f.config, err = readJSON(filepath.Join(dir, ConfigFile), &f.cfg); err != nil {
		return f, err
	}
	if err := f.cfg.check(); err != nil {
		return f, fmt.Errorf("%s: %v", filepath.Join(dir, ConfigFile), err)
	}
	f.tokPath = filepath.Join(dir, TokenizerFile)
	for _, name := range weightFiles {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			f.weightsPath = filepath.Join(dir, name)
			break
		}
	}
	if f.weightsPath == "" {
		if _, err := os.Stat(f.tokPath); err != nil {
			return f, missing(err)
		}
		return f, fmt.Errorf("%s holds no weights: want %s or %s", dir, weightFiles[0], weightFiles[1])
	}
	f.key = cacheKey{config: f.config, weightsName: filepath.Base(f.weightsPath)}
	if f.key.tokenizer, err = stampOf(f.tokPath); err != nil {
		return f, missing(err)
	}
	if f.key.weights, err = stampOf(f.weightsPath); err != nil {
		return f, missing(err)
	}
	return f, nil
}

func load(dir string, quantized bool) (*Encoder, error) {
	f, err := findFiles(dir)
	if err != nil {
		return nil, err
	}
	cfg, weightsPath := f.cfg, f.weightsPath
	c, unmapCache, cacheErr := readCache(dir, f.key, cfg)
	raw, unmapWeights, err := mmap.Map(weightsPath)
	if err != nil {
		unmapCache()
		return nil, err
	}
	unmap := func() error { unmapCache(); return unmapWeights() }
	var e *Encoder
	if cacheErr == nil {
		e, cacheErr = c.table.encoder(cfg, c.tok, raw)
	}
	if cacheErr != nil {
		// No cache, or one that does not fit the files: work it all out
		// and keep it for the next start.
		if c, err = compile(cfg, f.config, f.tokPath, raw, weightsPath); err == nil {
			e, err = c.table.encoder(cfg, c.tok, raw)
		}
		if err != nil {
			unmap()
			return nil, err
		}
		c.quant = quantLayers(e.layers)
		writeCache(dir, f.key, c)
	}
	e.unmap = unmap
	abs, err := filepath.Abs(dir)
	if err != nil {
		abs = dir
	}
	e.name, e.hash = filepath.Base(abs), c.hash
	if quantized {
		e.useQuant(c.quant)
	}
	return e, nil
}

// compile works out what the cache keeps of a model: its tokenizer, its
// table and its fingerprint.
func compile(cfg bertConfig, config []byte, tokPath string, raw []byte, weightsPath string) (cached, error) {
	tokData, err := os.ReadFile(tokPath)
	if err != nil {
		return cached{}, missing(err)
	}
	tok, err := ParseTokenizer(tokData)
	if err == nil {
		err = tok.fits(cfg.Vocab)
	}
	if err != nil {
		return cached{}, fmt.Errorf("%s: %v", tokPath, err)
	}
	tensors, err := parseSafetensors(raw)
	if err != nil {
		return cached{}, fmt.Errorf("%s: %v", weightsPath, err)
	}
	t, err := tableOf(cfg, tensors, weightsPath)
	if err != nil {
		return cached{}, err
	}
	return cached{tok: tok, table: t, hash: fingerprint(config, tokData, raw)}, nil
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
		for i := range e.layers {
			for _, m := range e.layers[i].matrices() {
				if useInt8 && m.u8 != nil {
					mmap.Touch(m.u8)
					mmap.Touch(m.scales)
				} else if m.q8 != nil {
					mmap.Touch(m.q8)
					mmap.Touch(m.scales)
				} else {
					mmap.Touch(m.f16)
				}
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

// buffers are one forward pass's working memory; split is how many
// share its attention and activations, each with its attention scratch.
type buffers struct {
	x, qkv, ctx, tmp, inter, scores, vt []float32
	split                               int
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

// embed runs the encoder over ids and pools its output. With workers >
// 1, a long text has its matrix products, attention and activations
// shared among them; a short one, a query, its layers' steps shared by
// two goroutines (runShared).
func (e *Encoder) embed(ids []int32, workers int) []float32 {
	h := e.cfg.Hidden
	n := len(ids)
	b, _ := e.scratch.Get().(*buffers)
	if b == nil {
		b = new(buffers)
	}
	defer e.scratch.Put(b)
	shared := workers > 1 && n < 16
	// A long text's attention and activations are split over the workers
	// too: alone, they took as long as its matrix products.
	split := workers
	if n < 16 {
		split = 1
	}
	if shared {
		split = 2 // a scratch for each of the two sharing the steps
	}
	b.size(e.cfg, n, split)

	for i, id := range ids {
		row := b.x[i*h : (i+1)*h]
		e.words.row(int(id), row)
		pos := b.tmp[:h]
		e.pos.row(i, pos)
		for j := range row {
			row[j] += pos[j] + e.typ[j]
		}
	}
	layerNorm(b.x, e.embNorm.gamma, e.embNorm.beta, float32(e.cfg.Eps))
	if shared {
		e.runShared(b, n)
	} else {
		for i := range e.layers {
			for step := range layerSteps {
				e.step(&e.layers[i], b, n, step, 0, 1, workers, nil)
			}
		}
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

// size readies b for a pass over n tokens, with attention scratch for
// split at once.
func (b *buffers) size(cfg bertConfig, n, split int) {
	h, dh := cfg.Hidden, cfg.Hidden/cfg.Heads
	pad := (n + 7) &^ 7 // attention rows, padded for the vector kernel
	b.x = grow(b.x, n*h)
	b.qkv = grow(b.qkv, n*3*h)
	b.ctx = grow(b.ctx, n*h)
	b.tmp = grow(b.tmp, n*h)
	b.inter = grow(b.inter, n*cfg.Intermediate)
	b.scores = grow(b.scores, split*n*pad)
	b.vt = grow(b.vt, split*dh*pad)
	b.split = split
	clear(b.scores)
	clear(b.vt)
}

// layerSteps is how many steps a layer takes: attention, its output
// projection, its norm, the intermediate projection, the output
// projection and its norm. Each step reads what the one before wrote.
const layerSteps = 6

// step runs step of layer l over the n tokens in b, or of them the share
// part of parts: of the attention heads, of the projections' output
// columns, or of the tokens a norm normalises. The shares of a step write
// apart; shared, when not nil, holds what they share: the step's input in
// eight bits. With one part, workers share the step's matrix products,
// and for a long text its attention and activations.
func (e *Encoder) step(l *bertLayer, b *buffers, n, step, part, parts, workers int, shared *sharedStep) {
	h, heads := e.cfg.Hidden, e.cfg.Heads
	dh := h / heads
	share := func(total int) (lo, hi int) { return total * part / parts, total * (part + 1) / parts }
	switch step {
	case 0: // the heads' queries, keys and values, and their attention
		h0, h1 := share(heads)
		c0, c1 := h0*dh, h1*dh
		// The three products share their input: in eight bits it is
		// rounded once (int8.go).
		acts, own := shared.acts(&l.query, n, b.x)
		if own {
			defer acts.release()
		}
		for i, m := range []*matrix{&l.query, &l.key, &l.value} {
			w := m.rowsOf(c0, c1)
			y := b.qkv[i*h+c0:]
			if acts != nil {
				w.mulActs(n, acts, y, 3*h, workers)
				addBias(n, y, 3*h, l.qkvBias[i*h+c0:i*h+c1])
				continue
			}
			linear(n, b.x, &w, l.qkvBias[i*h+c0:i*h+c1], y, 3*h, workers)
		}
		pad := (n + 7) &^ 7
		scale := float32(1 / math.Sqrt(float64(dh)))
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
		if parts > 1 {
			scores, vt := b.scores[part*n*pad:(part+1)*n*pad], b.vt[part*dh*pad:(part+1)*dh*pad]
			for hd := h0; hd < h1; hd++ {
				attend(hd, scores, vt)
			}
			return
		}
		spread(heads, b.split, func(w, lo, hi int) {
			for hd := lo; hd < hi; hd++ {
				attend(hd, b.scores[w*n*pad:(w+1)*n*pad], b.vt[w*dh*pad:(w+1)*dh*pad])
			}
		})
	case 1: // the attention's output, added to the layer's input
		c0, c1 := share(h)
		w := l.attnOut.rowsOf(c0, c1)
		acts, own := shared.acts(&l.attnOut, n, b.ctx)
		linearActs(n, b.ctx, acts, &w, l.attnOutBias[c0:c1], b.tmp[c0:], h, workers)
		if own {
			acts.release()
		}
		addColumns(b.x, b.tmp, h, c0, c1)
	case 2, 5:
		norm := l.attnNorm
		if step == 5 {
			norm = l.outNorm
		}
		r0, r1 := share(n)
		layerNorm(b.x[r0*h:r1*h], norm.gamma, norm.beta, float32(e.cfg.Eps))
	case 3: // the intermediate projection and its activation
		in := e.cfg.Intermediate
		c0, c1 := share(in)
		w := l.inter.rowsOf(c0, c1)
		acts, own := shared.acts(&l.inter, n, b.x)
		linearActs(n, b.x, acts, &w, l.interBias[c0:c1], b.inter[c0:], in, workers)
		if own {
			acts.release()
		}
		if parts > 1 {
			for i := range n {
				geluAll(b.inter[i*in+c0 : i*in+c1])
			}
			return
		}
		spread(n, b.split, func(_, lo, hi int) {
			geluAll(b.inter[lo*in : hi*in])
		})
	case 4: // the output projection, added to the layer's input
		c0, c1 := share(h)
		w := l.out.rowsOf(c0, c1)
		acts, own := shared.acts(&l.out, n, b.inter)
		linearActs(n, b.inter, acts, &w, l.outBias[c0:c1], b.tmp[c0:], h, workers)
		if own {
			acts.release()
		}
		addColumns(b.x, b.tmp, h, c0, c1)
	}
}

// runShared runs the layers' steps over the n tokens in b on two
// goroutines, the caller's and a helper's, which claim the steps' two
// shares in order: a share begins once both shares of the step before
// have ended. A helper that starts late, the processor busy, finds shares
// taken and leaves; the caller takes whatever is left, and waits only for
// a share the helper is running. For a query's few tokens, this halves
// the time of its products, where sharing each product among goroutines
// started for it cost as much as it saved.
func (e *Encoder) runShared(b *buffers, n int) {
	const parts = 2
	steps := make([]sharedStep, len(e.layers)*layerSteps)
	for i := range steps {
		steps[i].ended = make(chan struct{})
	}
	var next atomic.Int32
	work := func() {
		for {
			i := int(next.Add(1)) - 1
			if i >= len(steps)*parts {
				return
			}
			s := i / parts
			if s > 0 {
				steps[s-1].wait(parts)
			}
			e.step(&e.layers[s/layerSteps], b, n, s%layerSteps, i%parts, parts, 1, &steps[s])
			if steps[s].done.Add(1) == parts {
				steps[s].release()
				close(steps[s].ended)
			}
		}
	}
	go work()
	work()
	steps[len(steps)-1].wait(parts)
}

// A sharedStep counts the shares of a step that have ended, and closes
// ended with the last. It holds the step's input in eight bits, rounded
// by the first share to ask for it: each share rounded it, and a query's
// roundings, half of them twice, took 2% of a served hybrid search.
type sharedStep struct {
	done   atomic.Int32
	ended  chan struct{}
	claim  atomic.Bool
	rounds atomic.Pointer[acts8]
}

// acts returns x, n rows of w.cols values, in eight bits for the products
// with w, or nil when w's are not in eight bits; own says the caller
// releases them. Shared, the first share rounds them and the other waits
// a moment, then rounds its own: the one rounding may have been stopped.
// The step's last share to end releases the shared ones (release).
func (s *sharedStep) acts(w *matrix, n int, x []float32) (a *acts8, own bool) {
	if !useInt8 || w.u8 == nil {
		return nil, false
	}
	if s == nil {
		return quantActs(n, w.cols, x), true
	}
	if a := s.rounds.Load(); a != nil {
		return a, false
	}
	if s.claim.CompareAndSwap(false, true) {
		a := quantActs(n, w.cols, x)
		s.rounds.Store(a)
		return a, false
	}
	for range 1 << 12 {
		if a := s.rounds.Load(); a != nil {
			return a, false
		}
	}
	return quantActs(n, w.cols, x), true
}

// release gives back the step's shared rounding.
func (s *sharedStep) release() {
	if a := s.rounds.Load(); a != nil {
		a.release()
	}
}

// wait waits for the parts shares of the step to end. A share takes tens
// of microseconds, and spinning for the other costs less than sleeping
// and being woken; but a goroutine the system or the runtime stopped
// mid-share (a collection, another request) may take milliseconds, and
// after spinWait the waiter sleeps, which frees its processor to run that
// goroutine. While it spins it yields its processor between checks, to
// a goroutine that waits for one: the words' channel of a hybrid search,
// or the helper itself. kbq serve, ten queries × 40 hybrid, two sittings
// of three rounds alternating: p99 5.87 / 5.03 / 5.69 and 5.93 / 5.47 /
// 6.12 ms spinning alone, 3.69 / 3.57 / 3.89 and 3.55 / 3.52 / 4.45 ms
// yielding; p50 within the spread (1.52–2.06 against 1.55–2.19 ms).
func (s *sharedStep) wait(parts int32) {
	if s.done.Load() >= parts {
		return
	}
	start := time.Now()
	for time.Since(start) < spinWait {
		for range 64 {
			if s.done.Load() >= parts {
				return
			}
		}
		runtime.Gosched()
	}
	<-s.ended
}

// spinWait is how long a share is waited for before the waiter sleeps:
// longer than most shares of a query's steps take. Waiting longer let a
// stopped helper hold a query up for longer; shorter, the waiter slept
// through shares about to end. kbq serve, ten queries × 20, three rounds
// each: at 300 µs hybrid p50 3.87 / 3.96 / 4.00 ms and p99 12.3 / 11.1 /
// 12.9 ms, at 100 µs 3.73 / 3.70 / 3.91 and 9.4 / 8.4 / 9.1 ms, at 50 µs
// 3.96 / 3.95 / 3.95 and 8.1 / 9.0 / 8.2 ms.
const spinWait = 100 * time.Microsecond

// addColumns adds columns [c0, c1) of y to x's, rows of width values.
func addColumns(x, y []float32, width, c0, c1 int) {
	for off := 0; off+width <= len(x); off += width {
		addInto(x[off+c0:off+c1], y[off+c0:off+c1])
	}
}

// linear sets y = x·wᵀ + bias for the n rows of x; rows of y are ldy
// apart.
func linear(n int, x []float32, w *matrix, bias, y []float32, ldy int, workers int) {
	w.mulT(n, x, y, ldy, workers)
	addBias(n, y, ldy, bias)
}

// linearActs is linear with x in eight bits, acts, when they are not nil.
func linearActs(n int, x []float32, acts *acts8, w *matrix, bias, y []float32, ldy int, workers int) {
	if acts == nil {
		linear(n, x, w, bias, y, ldy, workers)
		return
	}
	w.mulActs(n, acts, y, ldy, workers)
	addBias(n, y, ldy, bias)
}

// addBias adds bias to each of the n rows of y, ldy apart.
func addBias(n int, y []float32, ldy int, bias []float32) {
	for i := range n {
		addInto(y[i*ldy:i*ldy+len(bias)], bias)
	}
}

// addInto adds y to x, element by element.
func addInto(x, y []float32) {
	y = y[:len(x)]
	i := 0
	if useAVX2 && len(x) >= 8 {
		i = len(x) &^ 7
		addAVX2(&x[0], &y[0], i)
	}
	for ; i < len(x); i++ {
		x[i] += y[i]
	}
}
