// Command httplat measures kbq serve over HTTP: the latency of /search
// for a set of queries, warm (p50 and p99 over rounds of every query),
// and, with -start, the time from starting a command to its first answer.
//
//	httplat -url http://127.0.0.1:7419 -q queries.txt -rounds 20
//	httplat -start 'kbq serve --db env --addr 127.0.0.1:7419' -url http://127.0.0.1:7419 -q queries.txt
//	httplat -auth 'Bearer TOKEN' -url http://127.0.0.1:7419 -q queries.txt
//	httplat -url http://127.0.0.1:7420 -beside http://127.0.0.1:7421 -q queries.txt
//
// With -beside, a second server is asked each query right after the
// first, request by request, and each gets its own line: two builds
// compared to see the same moments of a machine whose speed drifts.
// Several modes (-mode hybrid,lexical) are asked the same way, each query
// in each mode in turn, and with two the difference of their medians is
// printed: what one mode costs over the other, measured in the same
// moments rather than in runs minutes apart.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"time"
)

func main() {
	base := flag.String("url", "http://127.0.0.1:7419", "the server")
	queries := flag.String("q", "", "a file of queries, one a line")
	rounds := flag.Int("rounds", 20, "rounds of every query, after one round of warm-up")
	start := flag.String("start", "", "a command that starts the server: time it to its first answer, then measure")
	beside := flag.String("beside", "", "a second server, asked each query right after the first")
	modeList := flag.String("mode", "", "search in `MODE` (hybrid, lexical or semantic; default: the server's), or in each of several, comma-separated, in turn")
	flag.StringVar(&authorization, "auth", "", "send `VALUE` as every request's Authorization header (Bearer TOKEN)")
	flag.Parse()
	qs, err := readLines(*queries)
	if err != nil || len(qs) == 0 {
		fail(fmt.Errorf("-q: %v (%d queries)", err, len(qs)))
	}
	if *start != "" {
		cmd := exec.Command("sh", "-c", *start)
		cmd.Stderr = os.Stderr
		// Its own process group, all of which stop kills.
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		t0 := time.Now()
		if err := cmd.Start(); err != nil {
			fail(err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		stop = func() {
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
		defer stop()
		for {
			if _, err := search(*base, qs[0], ""); err == nil {
				break
			}
			select {
			case err := <-exited:
				stop = func() {}
				fail(fmt.Errorf("the server exited: %v", err))
			default:
			}
			if time.Since(t0) > 5*time.Minute {
				fail(fmt.Errorf("the server did not answer in 5 minutes"))
			}
			time.Sleep(2 * time.Millisecond)
		}
		fmt.Printf("first answer after start: %.0f ms\n", float64(time.Since(t0).Microseconds())/1000)
	}
	servers := []string{*base}
	if *beside != "" {
		servers = append(servers, *beside)
	}
	modes := strings.Split(*modeList, ",")
	times := make([][][]time.Duration, len(servers)) // by server, then mode
	for i := range times {
		times[i] = make([][]time.Duration, len(modes))
	}
	for round := range *rounds + 1 { // the first round warms up
		for _, q := range qs {
			for i, server := range servers {
				for j, mode := range modes {
					d, err := search(server, q, mode)
					if err != nil {
						fail(err)
					}
					if round > 0 {
						times[i][j] = append(times[i][j], d)
					}
				}
			}
		}
	}
	for i, byMode := range times {
		var p50s []float64
		for j, all := range byMode {
			slices.Sort(all)
			pct := func(p float64) float64 { return float64(all[int(p*float64(len(all)-1))].Microseconds()) / 1000 }
			var label []string
			if len(servers) > 1 {
				label = append(label, servers[i])
			}
			if len(modes) > 1 {
				label = append(label, modes[j])
			}
			prefix := ""
			if len(label) > 0 {
				prefix = strings.Join(label, " ") + ": "
			}
			fmt.Printf("%s%d searches: p50 %.2f ms, p99 %.2f ms, max %.2f ms\n", prefix, len(all), pct(0.5), pct(0.99), pct(1))
			p50s = append(p50s, pct(0.5))
		}
		if len(modes) == 2 {
			prefix := ""
			if len(servers) > 1 {
				prefix = servers[i] + " "
			}
			fmt.Printf("%s%s − %s: p50 %+.2f ms\n", prefix, modes[0], modes[1], p50s[0]-p50s[1])
		}
	}
}

// authorization is the Authorization header of every request, if any.
var authorization string

func search(base, q, mode string) (time.Duration, error) {
	t0 := time.Now()
	u := base + "/search?n=10&q=" + url.QueryEscape(q)
	if mode != "" {
		u += "&mode=" + url.QueryEscape(mode)
	}
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		return 0, err
	}
	if authorization != "" {
		req.Header.Set("Authorization", authorization)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != 200 {
		return 0, fmt.Errorf("%q: HTTP %d", q, resp.StatusCode)
	}
	return time.Since(t0), nil
}

func readLines(name string) ([]string, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" {
			out = append(out, l)
		}
	}
	return out, sc.Err()
}

// stop stops the server -start started; fail calls it too.
var stop = func() {}

func fail(err error) {
	stop()
	fmt.Fprintln(os.Stderr, "httplat:", err)
	os.Exit(1)
}
