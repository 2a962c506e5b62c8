// Command searchlat times searches inside one process, as kbq serve and
// kbq mcp run them: the artifact is opened once, each query runs a few
// times to warm up and then -r times, and the latencies are reported as
// percentiles per query and over all of them.
//
//	go run ./bench/searchlat [-r 50] [-mode hybrid] [-cpuprofile F] [-memprofile F] ARTIFACT QUERY...
//
// A mode that needs the query's vector embeds it in each timed run, with
// the artifact's model from $KBQ_MODELS, as a server does. The last line
// says what a timed search allocates, on average: a server's collector
// pays for it.
//
// A query of the form @N:WORD stands for WORD repeated N times (separated
// by spaces), and @or:N for N distinct OR-ed words, so that hostile input
// can be named on a command line.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kbqdev/kbq/internal/door/reader"
	"github.com/kbqdev/kbq/query"
)

func main() {
	runs := flag.Int("r", 50, "timed runs of each query")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the timed runs to `file`")
	memprofile := flag.String("memprofile", "", "write a profile of what the runs allocated to `file`")
	mode := flag.String("mode", "", "the search mode: hybrid, lexical or semantic (default: the artifact's)")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: searchlat [-r RUNS] [-cpuprofile FILE] ARTIFACT QUERY...")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() < 2 || *runs < 1 {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(flag.Arg(0), flag.Args()[1:], *runs, *mode, *cpuprofile, *memprofile); err != nil {
		fmt.Fprintln(os.Stderr, "searchlat:", err)
		os.Exit(1)
	}
}

func run(dir string, queries []string, runs int, mode, cpuprofile, memprofile string) error {
	start := time.Now()
	ix, err := query.Open(dir)
	if err != nil {
		return err
	}
	defer ix.Close()
	fmt.Printf("open: %s\n", ms(time.Since(start)))

	if cpuprofile != "" {
		f, err := os.Create(cpuprofile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	ctx := context.Background()
	embedder := reader.Embedder{Getenv: os.Getenv}
	var all []time.Duration
	var before, after runtime.MemStats
	var allocs, bytes uint64
	for _, spec := range queries {
		q := expand(spec)
		var times []time.Duration
		var total int
		for i := range runs + 3 {
			if i == 3 {
				runtime.ReadMemStats(&before)
			}
			t := time.Now()
			req := query.Request{Query: q, Mode: mode}
			err := embedder.Vectorize(ctx, ix, &req)
			var resp *query.Response
			if err == nil {
				resp, err = ix.Search(ctx, req)
			}
			d := time.Since(t)
			if err != nil {
				return fmt.Errorf("%q: %w", spec, err)
			}
			total = resp.Total
			if i >= 3 {
				times = append(times, d)
			}
		}
		runtime.ReadMemStats(&after)
		allocs += after.Mallocs - before.Mallocs
		bytes += after.TotalAlloc - before.TotalAlloc
		all = append(all, times...)
		slices.Sort(times)
		fmt.Printf("  %-55s p50 %8s  p99 %8s  max %8s  (%d chunks match)\n",
			strconv.Quote(short(spec)), ms(pct(times, 50)), ms(pct(times, 99)), ms(times[len(times)-1]), total)
	}
	if memprofile != "" {
		f, err := os.Create(memprofile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
			return err
		}
	}
	slices.Sort(all)
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	fmt.Printf("all %d queries: p50 %s  p99 %s; heap in use %d MiB; a search allocates %d KiB in %d objects\n",
		len(queries), ms(pct(all, 50)), ms(pct(all, 99)), m.HeapInuse>>20, bytes/uint64(len(all))>>10, allocs/uint64(len(all)))
	return nil
}

// expand turns the shorthand for hostile queries into the query.
func expand(spec string) string {
	if n, ok := strings.CutPrefix(spec, "@or:"); ok {
		k, _ := strconv.Atoi(n)
		words := make([]string, k)
		for i := range words {
			words[i] = "term" + strconv.Itoa(i)
		}
		return strings.Join(words, " OR ")
	}
	if rest, ok := strings.CutPrefix(spec, "@"); ok {
		n, word, found := strings.Cut(rest, ":")
		if k, err := strconv.Atoi(n); found && err == nil {
			return strings.TrimSpace(strings.Repeat(word+" ", k))
		}
	}
	return spec
}

func short(s string) string {
	if len(s) > 50 {
		return s[:47] + "..."
	}
	return s
}

// pct returns the p-th percentile of sorted durations, nearest rank.
func pct(sorted []time.Duration, p int) time.Duration {
	i := (len(sorted)*p + 99) / 100
	return sorted[max(i-1, 0)]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2fms", float64(d.Microseconds())/1000) }
