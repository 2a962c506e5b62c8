// Package remote is the part of embedding that reaches over the network:
// an OpenAI-compatible embeddings endpoint (OpenAI, Ollama, llama.cpp's
// server, LM Studio, vLLM) as a second provider beside the local encoder,
// and the download of the local encoder's known models. Requests go
// through internal/openai, which retries what may pass.
package remote

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/kbqdev/kbq/internal/openai"
)

// Defaults of a Client.
const (
	DefaultBatch   = 64
	DefaultTimeout = openai.DefaultTimeout
	DefaultRetries = openai.DefaultRetries
	maxResponse    = 256 << 20
)

// A Client embeds texts with an OpenAI-compatible /embeddings endpoint.
type Client struct {
	// URL is the API's base, such as http://localhost:11434/v1; the
	// client posts to URL/embeddings.
	URL   string
	Model string
	// Key, when set, is sent as a bearer token.
	Key string
	// KeyEnv names where Key came from, for the advice of errors.
	KeyEnv string
	// Advice says how to trust the endpoint when it was sent no key
	// because the user did not name it (trust.Grant.Advice).
	Advice string
	// Batch is how many texts go in one request; 0 means DefaultBatch.
	Batch int
	// Timeout bounds each request; 0 means DefaultTimeout.
	Timeout time.Duration
	// Retries is how often a request that failed for a reason that may pass
	// (429, 5xx, a timeout, a refused connection) is sent again, after
	// waiting Backoff, then twice that, and so on, or as long as the
	// server's Retry-After says; 0 means DefaultRetries, negative none.
	Retries int
	Backoff time.Duration // 0 means 500 ms
	// Dims, when set, is the length every vector must have; otherwise the
	// first answer sets it, and Embed must not be called concurrently.
	Dims int
	// HTTP is the client requests go through; nil means a default one.
	HTTP *http.Client
}

// Endpoint is the address texts are posted to.
func (c *Client) Endpoint() string {
	return strings.TrimRight(c.URL, "/") + "/embeddings"
}

// CheckURL reports whether u can be an endpoint's base.
func CheckURL(u string) error {
	p, err := url.Parse(u)
	if err != nil {
		return err
	}
	if p.Scheme != "http" && p.Scheme != "https" || p.Host == "" {
		return fmt.Errorf("%q is not an http:// or https:// URL", u)
	}
	if strings.HasSuffix(strings.TrimRight(p.Path, "/"), "/embeddings") {
		return fmt.Errorf("%q names the embeddings route; give the API's base, such as http://localhost:11434/v1 (kbq adds /embeddings)", u)
	}
	return nil
}

// Embed returns one unit vector for each text, in order. Either every text
// is embedded or an error says why none are.
func (c *Client) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	batch := c.Batch
	if batch <= 0 {
		batch = DefaultBatch
	}
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += batch {
		vecs, err := c.embedBatch(ctx, texts[start:min(start+batch, len(texts))])
		if err != nil {
			return nil, err
		}
		out = append(out, vecs...)
	}
	return out, nil
}

type request struct {
	Model          string   `json:"model"`
	Input          []string `json:"input"`
	EncodingFormat string   `json:"encoding_format"`
}

type response struct {
	Data []struct {
		Index     *int      `json:"index"`
		Embedding []float64 `json:"embedding"`
	} `json:"data"`
}

// embedBatch sends one request, again while it fails for a reason that
// may pass.
func (c *Client) embedBatch(ctx context.Context, texts []string) ([][]float32, error) {
	body, err := json.Marshal(request{Model: c.Model, Input: texts, EncodingFormat: "float"})
	if err != nil {
		return nil, err
	}
	p := &openai.Poster{
		Endpoint: c.Endpoint(), Label: "embeddings endpoint", Section: "embeddings", Model: c.Model,
		Key: c.Key, KeyEnv: c.KeyEnv, Advice: c.Advice, Timeout: c.Timeout, Retries: c.Retries, Backoff: c.Backoff,
		MaxResponse: maxResponse, SlowHint: ", or lower embeddings.batch_size",
		BigHint: "; send fewer texts at once (embeddings.batch_size)", HTTP: c.HTTP,
	}
	var vecs [][]float32
	err = p.Post(ctx, body, func(data []byte) (err error) {
		vecs, err = c.vectors(data, len(texts))
		return err
	})
	return vecs, err
}

// vectors reads an answer: as many vectors as texts, all of one length.
func (c *Client) vectors(data []byte, n int) ([][]float32, error) {
	endpoint := c.Endpoint()
	var r response
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("embeddings endpoint %s: the answer is not an embeddings response (%v): is the URL an OpenAI-compatible API's base, such as http://localhost:11434/v1?", endpoint, err)
	}
	if len(r.Data) != n {
		return nil, fmt.Errorf("embeddings endpoint %s: %d vectors for %d texts: the server does not take a batch of texts; try embeddings.batch_size: 1", endpoint, len(r.Data), n)
	}
	vecs := make([][]float32, n)
	for i, d := range r.Data {
		at := i
		if d.Index != nil {
			at = *d.Index
		}
		if at < 0 || at >= n || vecs[at] != nil {
			return nil, fmt.Errorf("embeddings endpoint %s: the answer's vector indices are not 0 to %d, each once", endpoint, n-1)
		}
		if c.Dims == 0 {
			c.Dims = len(d.Embedding)
		}
		if len(d.Embedding) != c.Dims || c.Dims == 0 {
			return nil, fmt.Errorf("embeddings endpoint %s: a vector of %d values, where model %s gave %d: the endpoint serves another model than before; rebuild with kbc build --full", endpoint, len(d.Embedding), c.Model, c.Dims)
		}
		v, err := unit(d.Embedding)
		if err != nil {
			return nil, fmt.Errorf("embeddings endpoint %s: text %d: %v", endpoint, at, err)
		}
		vecs[at] = v
	}
	return vecs, nil
}

// unit scales v to unit length: kbq ranks by the dot product.
func unit(v []float64) ([]float32, error) {
	var sum float64
	for _, x := range v {
		sum += x * x
	}
	if sum == 0 || math.IsNaN(sum) || math.IsInf(sum, 0) {
		return nil, fmt.Errorf("a vector of length %v, which has no direction", math.Sqrt(sum))
	}
	scale := 1 / math.Sqrt(sum)
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(x * scale)
	}
	return out, nil
}
