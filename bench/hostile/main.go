//go:build linux

// Command hostile throws the costliest queries the query language allows
// at kbq's three doors, kbq search, kbq serve's /search and kbq mcp's
// knowledge_search, and prints each query's time and the memory its
// process used above its idle size, then the worst of each door.
//
//	go run ./bench/hostile -index DIR [-kbq bin/kbq] [-doors cli,http,mcp] [-r 3]
//
// Memory: for kbq search, the peak resident size of the process less that
// of a search for a word no document holds; for the servers, the peak
// resident size during the request (the kernel's VmHWM, reset before each
// one through /proc/PID/clear_refs) less the resident size after a first,
// ordinary query. Resident size counts the pages of the index's files that
// the search read (shared with the page cache, and bounded by the index's
// size); the servers' "private" column is their anonymous memory alone
// (RssAnon after the request, less the same after the first query).
// Targets: 1 s and 100 MB.
package main

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"
)

type measure struct {
	time    time.Duration
	mem     int64 // peak resident bytes above idle, the mapped index included
	private int64 // private (anonymous) resident bytes above idle after the request; -1 unknown
	err     error
}

type door interface {
	name() string
	search(q string) measure
	close()
}

func main() {
	index := flag.String("index", "", "the artifact directory to search (required)")
	kbq := flag.String("kbq", "bin/kbq", "the kbq binary")
	doors := flag.String("doors", "cli,http,mcp", "the doors to try")
	runs := flag.Int("r", 3, "runs of each query: the median time and the largest memory are shown")
	only := flag.String("only", "", "run only the queries whose name contains this")
	flag.Parse()
	if *index == "" {
		fmt.Fprintln(os.Stderr, "hostile: -index DIR is required")
		os.Exit(2)
	}
	queries := hostileQueries()
	fmt.Printf("%d queries of up to %d bytes, %d runs each; index %s\n\n", len(queries), maxQueryBytes, *runs, *index)
	failed := false
	for _, d := range strings.Split(*doors, ",") {
		var dr door
		var err error
		switch d {
		case "cli":
			dr, err = newCLI(*kbq, *index)
		case "http":
			dr, err = newHTTP(*kbq, *index)
		case "mcp":
			dr, err = newMCP(*kbq, *index)
		default:
			err = fmt.Errorf("unknown door %q", d)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "hostile: %s: %v\n", d, err)
			os.Exit(1)
		}
		worst := measure{}
		worstTime, worstMem, worstPrivate := "", "", ""
		fmt.Printf("%-32s %10s %10s %10s\n", dr.name(), "time", "memory", "private")
		for _, h := range queries {
			if *only != "" && !strings.Contains(h.name, *only) {
				continue
			}
			var times []time.Duration
			var mem, private int64
			var qerr error
			for range *runs {
				m := dr.search(h.q)
				times = append(times, m.time)
				mem, private = max(mem, m.mem), max(private, m.private)
				if m.err != nil {
					qerr = m.err
				}
			}
			slices.Sort(times)
			t := times[len(times)/2]
			priv := "-"
			if private >= 0 {
				priv = fmt.Sprintf("%.1fMB", mb(private))
			}
			line := fmt.Sprintf("%-32s %8.1fms %8.1fMB %10s", h.name, ms(t), mb(mem), priv)
			switch refused := strings.HasSuffix(h.name, "(refused)"); {
			case qerr != nil && refused:
				line += "  refused: " + short(qerr.Error())
			case qerr != nil:
				line += "  error: " + short(qerr.Error())
				failed = true
			case refused:
				line += "  error: answered, but should be refused"
				failed = true
			}
			fmt.Println(line)
			if t > worst.time {
				worst.time, worstTime = t, h.name
			}
			if mem > worst.mem {
				worst.mem, worstMem = mem, h.name
			}
			if private > worst.private {
				worst.private, worstPrivate = private, h.name
			}
		}
		fmt.Printf("%-32s %8.1fms (%s)\n%-32s %8.1fMB (%s)\n", "worst time", ms(worst.time), worstTime, "worst memory", mb(worst.mem), worstMem)
		if worstPrivate != "" {
			fmt.Printf("%-32s %8.1fMB (%s)\n", "worst private memory", mb(worst.private), worstPrivate)
		}
		fmt.Println()
		dr.close()
	}
	if failed {
		os.Exit(1)
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
func mb(b int64) float64         { return float64(b) / (1 << 20) }

// short is the first line of s, cut to 100 bytes.
func short(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 100 {
		s = s[:100] + "…"
	}
	return s
}
