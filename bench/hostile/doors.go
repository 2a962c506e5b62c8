//go:build linux

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// cli runs kbq search once a query.
type cli struct {
	kbq, index string
	idle       int64 // peak resident bytes of an ordinary search
}

func newCLI(kbq, index string) (*cli, error) {
	c := &cli{kbq: kbq, index: index}
	var idle int64
	for range 3 {
		m := c.run("zzqqxx")
		if m.err != nil {
			return nil, m.err
		}
		idle = max(idle, m.mem)
	}
	c.idle = idle
	return c, nil
}

func (c *cli) name() string { return "kbq search" }
func (c *cli) close()       {}

func (c *cli) run(q string) measure {
	cmd := exec.Command(c.kbq, "search", "--index", c.index, "-n", "5", "--", q)
	cmd.Env = append(os.Environ(), "KBQ_USAGE=off")
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	start := time.Now()
	err := cmd.Run()
	m := measure{time: time.Since(start)}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		m.mem = int64(ru.Maxrss) << 10
	}
	var exit *exec.ExitError
	if err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 1) { // 1: no results
		m.err = fmt.Errorf("%v: %s", err, stderr.String())
	}
	return m
}

func (c *cli) search(q string) measure {
	m := c.run(q)
	m.mem, m.private = max(0, m.mem-c.idle), -1
	return m
}

// server is a kbq serve or kbq mcp process whose memory is read from /proc.
type server struct {
	cmd            *exec.Cmd
	idle, idleAnon int64
}

func (s *server) start(bin, index string, args ...string) error {
	s.cmd = exec.Command(bin, args...)
	s.cmd.Env = append(os.Environ(), "KBQ_USAGE=off", "KBQ_INDEX="+index)
	s.cmd.Stderr = os.Stderr
	return nil
}

// status reads a field of /proc/PID/status, in bytes.
func (s *server) status(field string) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// resetPeak makes VmHWM start again from the current size.
func (s *server) resetPeak() {
	os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", s.cmd.Process.Pid), []byte("5"), 0)
}

func (s *server) measure(do func() error) measure {
	s.resetPeak()
	start := time.Now()
	err := do()
	return measure{time: time.Since(start), mem: max(0, s.status("VmHWM")-s.idle), private: max(0, s.status("RssAnon")-s.idleAnon), err: err}
}

func (s *server) stop() {
	s.cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		s.cmd.Process.Kill()
	}
}

// httpDoor sends each query to kbq serve's /search.
type httpDoor struct {
	server
	base   string
	client *http.Client
}

func newHTTP(bin, index string) (*httpDoor, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := ln.Addr().String()
	ln.Close()
	d := &httpDoor{base: "http://" + addr, client: &http.Client{Timeout: 2 * time.Minute}}
	d.start(bin, index, "serve", "--addr", addr)
	if err := d.cmd.Start(); err != nil {
		return nil, err
	}
	for i := 0; ; i++ {
		resp, err := d.client.Get(d.base + "/healthz")
		if err == nil {
			resp.Body.Close()
			break
		}
		if i == 100 {
			d.stop()
			return nil, fmt.Errorf("kbq serve did not answer: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := d.get("get-help"); err != nil {
		d.stop()
		return nil, err
	}
	d.idle, d.idleAnon = d.status("VmRSS"), d.status("RssAnon")
	return d, nil
}

func (d *httpDoor) name() string { return "kbq serve /search" }
func (d *httpDoor) close()       { d.stop() }

func (d *httpDoor) get(q string) error {
	resp, err := d.client.Get(d.base + "/search?q=" + url.QueryEscape(q))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", resp.Status, body)
	}
	return nil
}

func (d *httpDoor) search(q string) measure {
	return d.measure(func() error { return d.get(q) })
}

// mcpDoor calls knowledge_search on kbq mcp over stdio.
type mcpDoor struct {
	server
	in  io.WriteCloser
	out *bufio.Reader
	id  int
}

func newMCP(bin, index string) (*mcpDoor, error) {
	d := &mcpDoor{}
	d.start(bin, index, "mcp")
	in, err := d.cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := d.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	d.in, d.out = in, bufio.NewReaderSize(out, 1<<20)
	if err := d.cmd.Start(); err != nil {
		return nil, err
	}
	if _, err := d.call("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "hostile", "version": "1"}}); err != nil {
		return nil, err
	}
	fmt.Fprintln(d.in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if err := d.searchOnce("get-help"); err != nil {
		return nil, err
	}
	d.idle, d.idleAnon = d.status("VmRSS"), d.status("RssAnon")
	return d, nil
}

func (d *mcpDoor) name() string { return "kbq mcp knowledge_search" }
func (d *mcpDoor) close()       { d.in.Close(); d.stop() }

func (d *mcpDoor) call(method string, params any) (json.RawMessage, error) {
	d.id++
	msg, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": d.id, "method": method, "params": params})
	if _, err := d.in.Write(append(msg, '\n')); err != nil {
		return nil, err
	}
	for {
		line, err := d.out.ReadBytes('\n')
		if err != nil {
			return nil, err
		}
		var reply struct {
			ID     int             `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal(line, &reply) != nil || reply.ID != d.id {
			continue
		}
		if reply.Error != nil {
			return nil, errors.New(reply.Error.Message)
		}
		return reply.Result, nil
	}
}

func (d *mcpDoor) searchOnce(q string) error {
	res, err := d.call("tools/call", map[string]any{"name": "knowledge_search", "arguments": map[string]any{"query": q}})
	if err != nil {
		return err
	}
	var r struct {
		IsError bool `json:"isError"`
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	json.Unmarshal(res, &r)
	if r.IsError && len(r.Content) > 0 && !strings.Contains(r.Content[0].Text, "no results") {
		return errors.New(r.Content[0].Text)
	}
	return nil
}

func (d *mcpDoor) search(q string) measure {
	return d.measure(func() error { return d.searchOnce(q) })
}
