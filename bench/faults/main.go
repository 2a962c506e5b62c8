// Command faults misbehaves against a kbq serve on loopback, for
// bench/serve-load.sh: it holds many idle connections open, sends an
// oversized request, and hangs up in the middle of responses, then checks
// that the server still answers.
//
//	go run ./bench/faults -addr 127.0.0.1:7419
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:7419", "server address")
	idle := flag.Int("idle", 1000, "idle connections to hold open")
	flag.Parse()
	if err := run(*addr, *idle); err != nil {
		fmt.Fprintln(os.Stderr, "faults:", err)
		os.Exit(1)
	}
}

func run(addr string, idle int) error {
	base := "http://" + addr

	// Idle connections: opened and never used.
	var conns []net.Conn
	for range idle {
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			return fmt.Errorf("open idle connection %d: %w", len(conns)+1, err)
		}
		conns = append(conns, c)
	}
	if err := healthy(base); err != nil {
		return fmt.Errorf("with %d idle connections: %w", idle, err)
	}
	fmt.Printf("%d idle connections held open: server healthy\n", len(conns))

	// A 10 MB request body.
	body := strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"` + strings.Repeat("x", 10<<20) + `"}}`)
	req, _ := http.NewRequest("POST", base+"/mcp", body)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err == nil {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		fmt.Printf("10 MB request: HTTP %d\n", resp.StatusCode)
		if resp.StatusCode != http.StatusRequestEntityTooLarge {
			return fmt.Errorf("10 MB request got %d, want 413", resp.StatusCode)
		}
	} else {
		fmt.Printf("10 MB request: connection closed by the server (%v)\n", err)
	}
	// A huge URL.
	resp, err = http.Get(base + "/search?q=" + strings.Repeat("a", 200<<10))
	if err == nil {
		resp.Body.Close()
		fmt.Printf("200 KiB URL: HTTP %d\n", resp.StatusCode)
	}

	// Clients that hang up halfway through a large response.
	for i := range 50 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			return err
		}
		fmt.Fprintf(c, "GET /search?q=the+pipeline+and+objects+%d&n=50&max_tokens=200000 HTTP/1.1\r\nHost: %s\r\n\r\n", i, addr)
		br := bufio.NewReader(c)
		br.ReadString('\n') // the status line, then hang up
		c.Close()
	}
	fmt.Println("50 clients hung up mid-response")

	for _, c := range conns {
		c.Close()
	}
	if err := healthy(base); err != nil {
		return fmt.Errorf("after the faults: %w", err)
	}
	fmt.Println("after the faults: server healthy")
	return nil
}

func healthy(base string) error {
	client := &http.Client{Timeout: 5 * time.Second}
	resp, err := client.Get(base + "/search?q=transcript")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		return fmt.Errorf("search: HTTP %d", resp.StatusCode)
	}
	return nil
}
