// Package remote is the part of embedding that reaches over the network:
// an OpenAI-compatible embeddings endpoint (OpenAI, Ollama, llama.cpp's
// server, LM Studio, vLLM) as a second provider beside the local encoder,
// and the download of the local encoder's known models.
//
// It is kept apart from package embedding so that kbq, which links that
// package to embed queries, does not link net/http: the client would
// double the start-up time of every search.
package remote

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Defaults of a Client.
const (
	DefaultBatch   = 64
	DefaultTimeout = 60 * time.Second
	DefaultRetries = 4
	maxBackoff     = 30 * time.Second
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
	retries := c.Retries
	switch {
	case retries == 0:
		retries = DefaultRetries
	case retries < 0:
		retries = 0
	}
	wait := c.Backoff
	if wait <= 0 {
		wait = 500 * time.Millisecond
	}
	for attempt := 0; ; attempt++ {
		vecs, retryAfter, err := c.post(ctx, body, len(texts))
		if err == nil {
			return vecs, nil
		}
		var temp *temporary
		if !errors.As(err, &temp) || attempt == retries || ctx.Err() != nil {
			if temp != nil && attempt > 0 {
				err = fmt.Errorf("%w (tried %d times)", err, attempt+1)
			}
			return nil, err
		}
		pause := max(wait, retryAfter)
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(min(pause, maxBackoff)):
		}
		wait = min(2*wait, maxBackoff)
	}
}

// temporary is a failure that may pass if the request is sent again.
type temporary struct{ err error }

func (t *temporary) Error() string { return t.err.Error() }
func (t *temporary) Unwrap() error { return t.err }

// post sends one request and checks its answer: as many vectors as texts,
// all of one length.
func (c *Client) post(ctx context.Context, body []byte, n int) ([][]float32, time.Duration, error) {
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	endpoint := c.Endpoint()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, 0, fmt.Errorf("embeddings endpoint %s: %w", endpoint, err)
	}
	req.Header.Set("Content-Type", "application/json")
	if c.Key != "" {
		req.Header.Set("Authorization", "Bearer "+c.Key)
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, 0, c.transportError(ctx, err, timeout)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse+1))
	if err != nil {
		return nil, 0, c.transportError(ctx, err, timeout)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, retryAfter(resp.Header.Get("Retry-After")), c.statusError(resp.StatusCode, data)
	}
	if len(data) > maxResponse {
		return nil, 0, fmt.Errorf("embeddings endpoint %s: the answer is over %d MiB; send fewer texts at once (embeddings.batch_size)", endpoint, maxResponse>>20)
	}
	var r response
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, 0, fmt.Errorf("embeddings endpoint %s: the answer is not an embeddings response (%v): is the URL an OpenAI-compatible API's base, such as http://localhost:11434/v1?", endpoint, err)
	}
	if len(r.Data) != n {
		return nil, 0, fmt.Errorf("embeddings endpoint %s: %d vectors for %d texts: the server does not take a batch of texts; try embeddings.batch_size: 1", endpoint, len(r.Data), n)
	}
	vecs := make([][]float32, n)
	for i, d := range r.Data {
		at := i
		if d.Index != nil {
			at = *d.Index
		}
		if at < 0 || at >= n || vecs[at] != nil {
			return nil, 0, fmt.Errorf("embeddings endpoint %s: the answer's vector indices are not 0 to %d, each once", endpoint, n-1)
		}
		if c.Dims == 0 {
			c.Dims = len(d.Embedding)
		}
		if len(d.Embedding) != c.Dims || c.Dims == 0 {
			return nil, 0, fmt.Errorf("embeddings endpoint %s: a vector of %d values, where model %s gave %d: the endpoint serves another model than before; rebuild with kbc build --full", endpoint, len(d.Embedding), c.Model, c.Dims)
		}
		v, err := unit(d.Embedding)
		if err != nil {
			return nil, 0, fmt.Errorf("embeddings endpoint %s: text %d: %v", endpoint, at, err)
		}
		vecs[at] = v
	}
	return vecs, 0, nil
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

// transportError explains a request that got no answer.
func (c *Client) transportError(ctx context.Context, err error, timeout time.Duration) error {
	endpoint := c.Endpoint()
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return &temporary{fmt.Errorf("embeddings endpoint %s did not answer within %s: is it overloaded? raise embeddings.timeout, or lower embeddings.batch_size", endpoint, timeout)}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var op *net.OpError
	if errors.As(err, &op) {
		return &temporary{fmt.Errorf("embeddings endpoint %s: %v: is the server running, and is the URL right?", endpoint, op.Err)}
	}
	return &temporary{fmt.Errorf("embeddings endpoint %s: %w", endpoint, err)}
}

// statusError explains an answer other than 200, with the server's own
// message.
func (c *Client) statusError(code int, body []byte) error {
	endpoint := c.Endpoint()
	msg := serverMessage(body)
	err := fmt.Errorf("embeddings endpoint %s answered %d %s%s", endpoint, code, http.StatusText(code), msg)
	switch {
	case code == http.StatusTooManyRequests || code >= 500:
		return &temporary{err}
	case code == http.StatusUnauthorized || code == http.StatusForbidden:
		env := c.KeyEnv
		if env == "" {
			env = "the key's environment variable"
		}
		if c.Key == "" {
			return fmt.Errorf("%w: it wants a key; set %s", err, env)
		}
		return fmt.Errorf("%w: check the key in %s", err, env)
	case code == http.StatusNotFound:
		return fmt.Errorf("%w: check the model name %q and that the URL is the API's base, such as http://localhost:11434/v1", err, c.Model)
	}
	return err
}

// serverMessage is the error message of an OpenAI-style error body, or the
// start of the body, for an error message: ": message", or "".
func serverMessage(body []byte) string {
	var e struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(body, &e) == nil && len(e.Error) > 0 {
		var nested struct {
			Message string `json:"message"`
		}
		var plain string
		switch {
		case json.Unmarshal(e.Error, &nested) == nil && nested.Message != "":
			return ": " + clip(nested.Message)
		case json.Unmarshal(e.Error, &plain) == nil && plain != "":
			return ": " + clip(plain)
		}
	}
	if s := strings.TrimSpace(string(body)); s != "" {
		return ": " + clip(s)
	}
	return ""
}

func clip(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 200 {
		s = strings.ToValidUTF8(s[:200], "") + "…"
	}
	return s
}

// retryAfter reads a Retry-After header of seconds; 0 when there is none.
func retryAfter(v string) time.Duration {
	secs, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || secs < 0 {
		return 0
	}
	return time.Duration(secs) * time.Second
}

// Key finds an endpoint's key in the environment: in keyEnv when it is
// set, else in KBQ_EMBED_KEY, else in OPENAI_API_KEY. It returns the key
// ("" for none) and the variable to advise setting.
func Key(getenv func(string) string, keyEnv string) (key, env string) {
	if keyEnv != "" {
		return getenv(keyEnv), keyEnv
	}
	for _, name := range []string{"KBQ_EMBED_KEY", "OPENAI_API_KEY"} {
		if key = getenv(name); key != "" {
			return key, name
		}
	}
	return "", "KBQ_EMBED_KEY"
}
