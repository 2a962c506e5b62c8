// Command queryembed measures what a query's vector costs a fresh process:
// loading the model and embedding one query, then the same query again in
// the same process. It runs itself -n times, each run a new process, and
// prints the mean, min and max of each.
//
//	go build -o /tmp/queryembed ./bench/queryembed
//	/tmp/queryembed -model ~/.cache/kbq/models/all-MiniLM-L6-v2 -n 20 [-exact]
//
// It loads the model as kbq does for queries, in eight bits; -exact loads
// it as kbc does for documents.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"time"

	"github.com/kbqdev/kbq/embedding"
)

func main() {
	model := flag.String("model", "", "the model's directory")
	q := flag.String("q", "set an environment variable for the current session", "the query")
	n := flag.Int("n", 20, "fresh processes to measure")
	exact := flag.Bool("exact", false, "load the weights as they are, not in eight bits")
	child := flag.Bool("child", false, "measure once, in this process")
	flag.Parse()
	if *model == "" {
		fmt.Fprintln(os.Stderr, "queryembed: -model DIR names the model")
		os.Exit(2)
	}
	var err error
	if *child {
		err = once(*model, *q, *exact)
	} else {
		err = parent(*model, *q, *n, *exact)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "queryembed:", err)
		os.Exit(1)
	}
}

// once prints the load, first and second embedding times, in nanoseconds.
func once(model, q string, exact bool) error {
	load := embedding.LoadQuantized
	if exact {
		load = embedding.Load
	}
	t0 := time.Now()
	e, err := load(model)
	if err != nil {
		return err
	}
	t1 := time.Now()
	if _, err := e.Embed(context.Background(), []string{q}); err != nil {
		return err
	}
	t2 := time.Now()
	if _, err := e.Embed(context.Background(), []string{q}); err != nil {
		return err
	}
	fmt.Println(t1.Sub(t0).Nanoseconds(), t2.Sub(t1).Nanoseconds(), time.Since(t2).Nanoseconds())
	return nil
}

func parent(model, q string, n int, exact bool) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	names := []string{"load", "first query", "load + first query", "second query"}
	runs := make([][]float64, len(names))
	for range n {
		out, err := exec.Command(self, "-child", "-model", model, "-q", q, "-exact="+fmt.Sprint(exact)).Output()
		if err != nil {
			return fmt.Errorf("%v: %s", err, bytes.TrimSpace(out))
		}
		var load, first, second int64
		if _, err := fmt.Sscan(string(out), &load, &first, &second); err != nil {
			return fmt.Errorf("child printed %q: %v", out, err)
		}
		for i, ns := range []int64{load, first, load + first, second} {
			runs[i] = append(runs[i], float64(ns)/1e6)
		}
	}
	fmt.Printf("%d fresh processes, %q:\n", n, q)
	for i, name := range names {
		var sum float64
		for _, v := range runs[i] {
			sum += v
		}
		fmt.Printf("  %-20s mean %6.2f ms  min %6.2f  max %6.2f\n", name, sum/float64(n), slices.Min(runs[i]), slices.Max(runs[i]))
	}
	return nil
}
