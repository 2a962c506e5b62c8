// Package openai posts requests to an OpenAI-compatible API (OpenAI,
// Ollama, llama.cpp's server, LM Studio, vLLM): again while a request fails
// for a reason that may pass, with errors that say what to do. The
// embeddings client (embedding/remote) and the chat client that compacts
// knowledge (compiler/llm) post through it.
package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Defaults of a Poster.
const (
	DefaultTimeout = 60 * time.Second
	DefaultRetries = 4
	maxBackoff     = 30 * time.Second
)

// A Poster posts JSON bodies to one endpoint.
type Poster struct {
	// Endpoint is the address bodies are posted to.
	Endpoint string
	// Label names the endpoint in errors ("embeddings endpoint"), and
	// Section the configuration section that sets it ("embeddings").
	Label, Section string
	Model          string
	// Key, when set, is sent as a bearer token; KeyEnv names where it
	// came from, for the advice of errors.
	Key, KeyEnv string
	// Advice, when set, says how to trust an endpoint that was sent no
	// key because the user did not name it; it ends the error of one that
	// wants a key.
	Advice string
	// Timeout bounds each request; 0 means DefaultTimeout.
	Timeout time.Duration
	// Retries is how often a request that failed for a reason that may pass
	// (429, 5xx, a timeout, a refused connection) is sent again, after
	// waiting Backoff, then twice that, and so on, or as long as the
	// server's Retry-After says; 0 means DefaultRetries, negative none.
	Retries int
	Backoff time.Duration // 0 means 500 ms
	// MaxResponse bounds an answer's size.
	MaxResponse int64
	// SlowHint and BigHint end the errors for an endpoint too slow to
	// answer and an answer too large.
	SlowHint, BigHint string
	// HTTP is the client requests go through; nil means a default one.
	HTTP *http.Client
}

// Post sends body, again while it fails for a reason that may pass, and
// hands the answer to accept; an error from accept is the answer's fault
// and ends the attempts.
func (p *Poster) Post(ctx context.Context, body []byte, accept func(answer []byte) error) error {
	retries := p.Retries
	switch {
	case retries == 0:
		retries = DefaultRetries
	case retries < 0:
		retries = 0
	}
	wait := p.Backoff
	if wait <= 0 {
		wait = 500 * time.Millisecond
	}
	for attempt := 0; ; attempt++ {
		answer, retryAfter, err := p.post(ctx, body)
		if err == nil {
			return accept(answer)
		}
		var temp *temporary
		if !errors.As(err, &temp) || attempt == retries || ctx.Err() != nil {
			if temp != nil && attempt > 0 {
				err = fmt.Errorf("%w (tried %d times)", err, attempt+1)
			}
			return err
		}
		pause := max(wait, retryAfter)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(min(pause, maxBackoff)):
		}
		wait = min(2*wait, maxBackoff)
	}
}

// temporary is a failure that may pass if the request is sent again.
type temporary struct{ err error }

func (t *temporary) Error() string { return t.err.Error() }
func (t *temporary) Unwrap() error { return t.err }

// post sends body once and returns the answer of a 200.
func (p *Poster) post(ctx context.Context, body []byte) ([]byte, time.Duration, error) {
	timeout := p.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.Endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, 0, fmt.Errorf("%s %s: %w", p.Label, p.Endpoint, err)
	}
	req.Header.Set("Content-Type", "application/json")
	if p.Key != "" {
		req.Header.Set("Authorization", "Bearer "+p.Key)
	}
	hc := p.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, 0, p.transportError(ctx, err, timeout)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, p.MaxResponse+1))
	if err != nil {
		return nil, 0, p.transportError(ctx, err, timeout)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, retryAfter(resp.Header.Get("Retry-After")), p.statusError(resp.StatusCode, data)
	}
	if int64(len(data)) > p.MaxResponse {
		return nil, 0, fmt.Errorf("%s %s: the answer is over %d MiB%s", p.Label, p.Endpoint, p.MaxResponse>>20, p.BigHint)
	}
	return data, 0, nil
}

// transportError explains a request that got no answer.
func (p *Poster) transportError(ctx context.Context, err error, timeout time.Duration) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return &temporary{fmt.Errorf("%s %s did not answer within %s: is it overloaded? raise %s.timeout%s", p.Label, p.Endpoint, timeout, p.Section, p.SlowHint)}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var op *net.OpError
	if errors.As(err, &op) {
		return &temporary{fmt.Errorf("%s %s: %v: is the server running, and is the URL right?", p.Label, p.Endpoint, op.Err)}
	}
	return &temporary{fmt.Errorf("%s %s: %w", p.Label, p.Endpoint, err)}
}

// statusError explains an answer other than 200, with the server's own
// message.
func (p *Poster) statusError(code int, body []byte) error {
	err := fmt.Errorf("%s %s answered %d %s%s", p.Label, p.Endpoint, code, http.StatusText(code), serverMessage(body))
	switch {
	case code == http.StatusTooManyRequests || code >= 500:
		return &temporary{err}
	case code == http.StatusUnauthorized || code == http.StatusForbidden:
		env := p.KeyEnv
		if env == "" {
			env = "the key's environment variable"
		}
		if p.Key == "" && p.Advice != "" {
			return fmt.Errorf("%w: it wants a key; %s", err, p.Advice)
		}
		if p.Key == "" {
			return fmt.Errorf("%w: it wants a key; set %s", err, env)
		}
		return fmt.Errorf("%w: check the key in %s", err, env)
	case code == http.StatusNotFound:
		return fmt.Errorf("%w: check the model name %q and that the URL is the API's base, such as http://localhost:11434/v1", err, p.Model)
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
			return ": " + Clip(nested.Message)
		case json.Unmarshal(e.Error, &plain) == nil && plain != "":
			return ": " + Clip(plain)
		}
	}
	if s := strings.TrimSpace(string(body)); s != "" {
		return ": " + Clip(s)
	}
	return ""
}

// Clip makes s one line of at most 200 bytes, for an error message.
func Clip(s string) string {
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
