package llm

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestReplyRetriesWhatMayPass(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" || r.Header.Get("Authorization") != "Bearer k" {
			http.Error(w, "no", http.StatusNotFound)
			return
		}
		var req request
		json.NewDecoder(r.Body).Decode(&req)
		if calls.Add(1) < 3 {
			w.Header().Set("Retry-After", "0")
			http.Error(w, `{"error":{"message":"slow down"}}`, http.StatusTooManyRequests)
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{
			"message": map[string]string{"role": "assistant", "content": "  echo: " + req.Messages[1].Content + "\n"}}}})
	}))
	defer srv.Close()
	c := &Client{URL: srv.URL + "/v1/", Model: "m", Key: "k", Backoff: time.Millisecond}
	got, err := c.Reply(context.Background(), "be brief", "hello")
	if err != nil || got != "echo: hello" || calls.Load() != 3 {
		t.Errorf("Reply = %q, %v after %d calls", got, err, calls.Load())
	}
}

func TestReplyErrors(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		status     int
		want       string
	}{
		{"unauthorized", `{"error":{"message":"bad key"}}`, 401, "answered 401 Unauthorized: bad key: it wants a key; set KBQ_LLM_KEY"},
		{"malformed", `{"choices":[]}`, 200, "the answer is not a chat completion"},
		{"cut", `{"choices":[{"message":{"content":"half"},"finish_reason":"length"}]}`, 200, "cut at the model's length limit"},
		{"empty", `{"choices":[{"message":{"content":"  "}}]}`, 200, "the reply is empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(tc.status)
				io.WriteString(w, tc.body)
			}))
			defer srv.Close()
			c := &Client{URL: srv.URL, Model: "m", KeyEnv: "KBQ_LLM_KEY", Retries: -1}
			_, err := c.Reply(context.Background(), "s", "u")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
}
