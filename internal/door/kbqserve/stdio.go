package kbqserve

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxLineBytes bounds one inbound JSON-RPC message on stdio.
const maxLineBytes = 16 << 20

// stdioTransport is the MCP transport on a process's stdin and stdout. A
// line that is not JSON gets a JSON-RPC parse error and one that is not a
// JSON-RPC message an invalid-request error, and the session goes on: the
// SDK's own transport ends the session on either, and an agent's one bad
// write should not cost it the server.
//
// When stdin ends, the requests already read are answered before the
// session closes, so that requests piped in from a file get their replies.
func stdioTransport(in io.Reader, out io.Writer) mcp.Transport {
	fl := newInflight()
	w := &lockedWriter{w: out, inflight: fl}
	return &mcp.IOTransport{
		Reader:        &lineFilter{in: bufio.NewReaderSize(in, 64<<10), out: w, inflight: fl},
		Writer:        w,
		MaxLineLength: -1, // lineFilter bounds lines itself
	}
}

// lockedWriter serializes writes, so that the filter's error replies and
// the server's messages never interleave: each is one Write of one line.
type lockedWriter struct {
	mu       sync.Mutex
	w        io.Writer
	inflight *inflight
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	n, err := l.w.Write(p)
	l.mu.Unlock()
	l.inflight.answered(p)
	return n, err
}

// inflight counts the requests read and not yet answered.
type inflight struct {
	mu      sync.Mutex
	ids     map[string]bool
	drained *sync.Cond
}

func newInflight() *inflight {
	f := &inflight{ids: make(map[string]bool)}
	f.drained = sync.NewCond(&f.mu)
	return f
}

// idKey is a request id as JSON text, or "" for none.
func idKey(id any) string {
	if id == nil {
		return ""
	}
	data, _ := json.Marshal(id)
	return string(data)
}

func (f *inflight) asked(msg json.RawMessage) {
	var probe struct {
		ID     any             `json:"id"`
		Method json.RawMessage `json:"method"`
	}
	if json.Unmarshal(msg, &probe) != nil || probe.Method == nil || probe.ID == nil {
		return
	}
	f.mu.Lock()
	f.ids[idKey(probe.ID)] = true
	f.mu.Unlock()
}

// answered takes the replies in an outgoing line off the count.
func (f *inflight) answered(line []byte) {
	var one struct {
		ID any `json:"id"`
	}
	var many []struct {
		ID any `json:"id"`
	}
	var keys []string
	if json.Unmarshal(line, &one) == nil {
		keys = append(keys, idKey(one.ID))
	} else if json.Unmarshal(line, &many) == nil {
		for _, m := range many {
			keys = append(keys, idKey(m.ID))
		}
	}
	f.mu.Lock()
	for _, k := range keys {
		delete(f.ids, k)
	}
	if len(f.ids) == 0 {
		f.drained.Broadcast()
	}
	f.mu.Unlock()
}

// wait returns once every request read has been answered, or after
// timeout.
func (f *inflight) wait(timeout time.Duration) {
	timer := time.AfterFunc(timeout, func() {
		f.mu.Lock()
		clear(f.ids)
		f.drained.Broadcast()
		f.mu.Unlock()
	})
	defer timer.Stop()
	f.mu.Lock()
	for len(f.ids) > 0 {
		f.drained.Wait()
	}
	f.mu.Unlock()
}

func (l *lockedWriter) Close() error { return nil }

// lineFilter passes on the lines of in that are JSON-RPC messages (or
// batches of them) and answers the others itself.
type lineFilter struct {
	in       *bufio.Reader
	out      io.Writer
	inflight *inflight
	pending  []byte
}

// drainTimeout bounds the wait for answers once stdin has ended.
const drainTimeout = 30 * time.Second

func (f *lineFilter) Read(p []byte) (int, error) {
	for len(f.pending) == 0 {
		line, err := f.readLine()
		if len(line) > 0 {
			f.pending = f.check(line)
		}
		if err != nil && len(f.pending) == 0 {
			if errors.Is(err, io.EOF) {
				f.inflight.wait(drainTimeout)
			}
			return 0, err
		}
	}
	n := copy(p, f.pending)
	f.pending = f.pending[n:]
	return n, nil
}

func (f *lineFilter) Close() error { return nil }

// readLine returns the next line without its newline. A line over
// maxLineBytes is answered with an error and skipped.
func (f *lineFilter) readLine() ([]byte, error) {
	var line []byte
	for {
		chunk, err := f.in.ReadSlice('\n')
		if len(line)+len(chunk) > maxLineBytes {
			f.reply(nil, jsonrpc.CodeInvalidRequest, "message over 16 MiB")
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = f.in.ReadSlice('\n')
			}
			return nil, eofOnly(err)
		}
		line = append(line, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return bytes.TrimSpace(line), eofOnly(err)
	}
}

func eofOnly(err error) error {
	if errors.Is(err, bufio.ErrBufferFull) {
		return nil
	}
	return err
}

// check returns line, newline-terminated, when it is a message or a
// batch; else it answers with an error and returns nil.
func (f *lineFilter) check(line []byte) []byte {
	if !json.Valid(line) {
		f.reply(nil, jsonrpc.CodeParseError, "parse error: the line is not JSON")
		return nil
	}
	msgs := []json.RawMessage{line}
	if line[0] == '[' {
		if err := json.Unmarshal(line, &msgs); err != nil || len(msgs) == 0 {
			f.reply(nil, jsonrpc.CodeInvalidRequest, "invalid request: an empty or malformed batch")
			return nil
		}
	}
	kept := msgs[:0]
	for _, m := range msgs {
		if _, err := jsonrpc.DecodeMessage(m); err != nil {
			f.reply(idOf(m), jsonrpc.CodeInvalidRequest, "invalid request: "+err.Error())
			return nil
		}
		if nullID(m) {
			// JSON-RPC answers a request whose id is null (the SDK would
			// take it for a notification and say nothing); MCP forbids it.
			f.reply(nil, jsonrpc.CodeInvalidRequest, "invalid request: the id is null; MCP requests take a string or number id")
			continue
		}
		kept = append(kept, m)
	}
	switch {
	case len(kept) == 0:
		return nil
	case len(kept) < len(msgs): // a batch, less what was answered here
		line, _ = json.Marshal(kept)
	}
	for _, m := range kept {
		f.inflight.asked(m)
	}
	return append(line, '\n')
}

// nullID reports whether m is a request (it has a method) whose id member
// is present and null.
func nullID(m json.RawMessage) bool {
	var probe map[string]json.RawMessage
	if json.Unmarshal(m, &probe) != nil || probe["method"] == nil {
		return false
	}
	id, ok := probe["id"]
	return ok && string(bytes.TrimSpace(id)) == "null"
}

// idOf returns the id of a message that may not be valid, or nil.
func idOf(m json.RawMessage) any {
	var probe struct {
		ID any `json:"id"`
	}
	if json.Unmarshal(m, &probe) != nil {
		return nil
	}
	switch probe.ID.(type) {
	case string, float64:
		return probe.ID
	}
	return nil
}

func (f *lineFilter) reply(id any, code int, message string) {
	data, _ := json.Marshal(map[string]any{
		"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": message},
	})
	f.out.Write(append(data, '\n'))
}
