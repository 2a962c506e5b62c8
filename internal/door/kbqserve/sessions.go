package kbqserve

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"time"
)

// Bounds of /mcp: the sessions kept, and the calls of one batch.
const (
	maxSessions   = 1000
	maxBatchCalls = 32
)

// batchVersions are the protocol versions that had JSON-RPC batches:
// 2025-06-18 removed them.
var batchVersions = []string{"2024-11-05", "2025-03-26"}

// knownVersions are the versions the MCP server negotiates; a client that
// asks for another gets the newest.
var knownVersions = []string{"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"}

// sessions bounds what /mcp holds for its clients: at most max sessions
// (the least recently used is closed to admit another), no JSON-RPC batch
// in a session whose protocol has none (the SDK admits one when the
// request leaves out its MCP-Protocol-Version header), and at most
// maxBatchCalls calls in one batch where batches exist.
type sessions struct {
	next    http.Handler
	max     int
	timeout time.Duration

	mu   sync.Mutex
	byID map[string]*session
}

type session struct {
	version string
	used    time.Time
}

func newSessions(next http.Handler, max int, timeout time.Duration) *sessions {
	return &sessions{next: next, max: max, timeout: timeout, byID: map[string]*session{}}
}

func (s *sessions) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id := r.Header.Get("Mcp-Session-Id")
	if r.Method == http.MethodDelete {
		s.forget(id)
		s.next.ServeHTTP(w, r)
		return
	}
	if r.Method != http.MethodPost {
		s.touch(id)
		s.next.ServeHTTP(w, r)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		s.next.ServeHTTP(w, r.WithContext(r.Context())) // the SDK says what failed
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	if batch := bytes.HasPrefix(bytes.TrimLeft(body, " \t\r\n"), []byte("[")); batch {
		version := s.version(id)
		var calls []json.RawMessage
		switch {
		case id == "" || !slices.Contains(batchVersions, version):
			writeRPCError(w, fmt.Sprintf("JSON-RPC batches are not part of MCP %s: send one message a request", orLatest(version)))
			return
		case json.Unmarshal(body, &calls) == nil && len(calls) > maxBatchCalls:
			writeRPCError(w, fmt.Sprintf("a batch of %d calls: at most %d in one request", len(calls), maxBatchCalls))
			return
		}
	}
	if id != "" {
		s.touch(id)
		s.next.ServeHTTP(w, r)
		return
	}
	// No session yet: an initialize, whose answer names the new session.
	var init struct {
		Method string `json:"method"`
		Params struct {
			ProtocolVersion string `json:"protocolVersion"`
		} `json:"params"`
	}
	json.Unmarshal(body, &init)
	rec := &sessionRecorder{ResponseWriter: w}
	s.next.ServeHTTP(rec, r)
	if rec.id != "" {
		s.add(rec.id, negotiated(init.Params.ProtocolVersion))
	}
}

func negotiated(asked string) string {
	if slices.Contains(knownVersions, asked) {
		return asked
	}
	return knownVersions[len(knownVersions)-1]
}

func orLatest(v string) string {
	if v == "" {
		return "2025-06-18 and later"
	}
	return v
}

func (s *sessions) version(id string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ss := s.byID[id]; ss != nil {
		return ss.version
	}
	return ""
}

func (s *sessions) touch(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ss := s.byID[id]; ss != nil {
		ss.used = time.Now()
	}
}

func (s *sessions) forget(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.byID, id)
}

// add keeps a new session, closing the least recently used beyond max
// (and forgetting those the SDK closed for idling).
func (s *sessions) add(id, version string) {
	s.mu.Lock()
	now := time.Now()
	s.byID[id] = &session{version: version, used: now}
	var evict []string
	for k, ss := range s.byID {
		if s.timeout > 0 && now.Sub(ss.used) > s.timeout {
			delete(s.byID, k)
		}
	}
	for len(s.byID) > s.max {
		oldest := ""
		for k, ss := range s.byID {
			if oldest == "" || ss.used.Before(s.byID[oldest].used) {
				oldest = k
			}
		}
		delete(s.byID, oldest)
		evict = append(evict, oldest)
	}
	s.mu.Unlock()
	for _, k := range evict {
		req, _ := http.NewRequest(http.MethodDelete, "/mcp", nil)
		req.Header.Set("Mcp-Session-Id", k)
		s.next.ServeHTTP(discard{h: http.Header{}}, req)
	}
}

// sessionRecorder notes the session an answer names.
type sessionRecorder struct {
	http.ResponseWriter
	id string
}

func (r *sessionRecorder) WriteHeader(code int) {
	if code == http.StatusOK {
		r.id = r.Header().Get("Mcp-Session-Id")
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *sessionRecorder) Write(b []byte) (int, error) {
	if r.id == "" {
		r.id = r.Header().Get("Mcp-Session-Id")
	}
	return r.ResponseWriter.Write(b)
}

func (r *sessionRecorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (r *sessionRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// discard is a ResponseWriter that keeps nothing.
type discard struct{ h http.Header }

func (d discard) Header() http.Header         { return d.h }
func (d discard) Write(b []byte) (int, error) { return len(b), nil }
func (d discard) WriteHeader(int)             {}

// writeRPCError answers 400 with a JSON-RPC error of no id.
func writeRPCError(w http.ResponseWriter, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": nil, "error": map[string]any{"code": -32600, "message": msg}})
}
