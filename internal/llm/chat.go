// Package llm asks a language model behind an OpenAI-compatible chat
// completions endpoint (OpenAI, Ollama, llama.cpp's server, vLLM) for a
// reply, for kbc compact.
package llm

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/kbqdev/kbq/internal/openai"
)

// DefaultTimeout bounds one request: a long summary takes minutes.
const DefaultTimeout = 5 * time.Minute

// A Client asks one model for replies.
type Client struct {
	// URL is the API's base, such as http://localhost:11434/v1; the
	// client posts to URL/chat/completions.
	URL, Model string
	Key        string
	KeyEnv     string // where Key came from, for the advice of errors
	Advice     string // how to trust the endpoint (trust.Grant.Advice)
	Timeout    time.Duration
	Retries    int // 0 means openai.DefaultRetries, negative none
	Backoff    time.Duration
}

// Endpoint is the address requests are posted to.
func (c *Client) Endpoint() string {
	return strings.TrimRight(c.URL, "/") + "/chat/completions"
}

type message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type request struct {
	Model       string    `json:"model"`
	Messages    []message `json:"messages"`
	Temperature float64   `json:"temperature"`
	Stream      bool      `json:"stream"`
}

type response struct {
	Choices []struct {
		Message      *message `json:"message"`
		FinishReason string   `json:"finish_reason"`
	} `json:"choices"`
}

// Reply asks the model to answer user under the instructions of system,
// and returns its reply.
func (c *Client) Reply(ctx context.Context, system, user string) (string, error) {
	body, err := json.Marshal(request{Model: c.Model, Messages: []message{{"system", system}, {"user", user}}})
	if err != nil {
		return "", err
	}
	p := &openai.Poster{
		Endpoint: c.Endpoint(), Label: "chat endpoint", Section: "llm", Model: c.Model,
		Key: c.Key, KeyEnv: c.KeyEnv, Advice: c.Advice, Timeout: cmp.Or(c.Timeout, DefaultTimeout), Retries: c.Retries, Backoff: c.Backoff,
		MaxResponse: 16 << 20,
	}
	var reply string
	err = p.Post(ctx, body, func(data []byte) error {
		var r response
		if err := json.Unmarshal(data, &r); err != nil || len(r.Choices) == 0 || r.Choices[0].Message == nil {
			return fmt.Errorf("chat endpoint %s: the answer is not a chat completion (%s): is the URL an OpenAI-compatible API's base, such as http://localhost:11434/v1?", c.Endpoint(), openai.Clip(string(data)))
		}
		choice := r.Choices[0]
		if choice.FinishReason == "length" {
			return fmt.Errorf("chat endpoint %s: the reply was cut at the model's length limit: compact fewer documents at once", c.Endpoint())
		}
		reply = strings.TrimSpace(choice.Message.Content)
		if reply == "" {
			return fmt.Errorf("chat endpoint %s: the reply is empty", c.Endpoint())
		}
		return nil
	})
	return reply, err
}
