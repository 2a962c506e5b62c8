// Command alternate times whole commands the way a noisy machine needs:
// each round runs every command once, in turn, so that a drift in the
// machine's speed reaches all of them alike (hyperfine runs one command's
// runs back to back). It prints each command's median, 10th and 90th
// percentile wall time.
//
//	go run ./bench/alternate -n 200 'old/kbq search retries' 'new/kbq search retries'
//
// Commands are split at spaces, with single or double quotes grouping;
// leading NAME=VALUE words are set in the command's environment (the same
// binary timed with and without a setting, no env process between), and
// output is discarded.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"
)

func main() {
	rounds := flag.Int("n", 100, "rounds: runs of each command")
	warmup := flag.Int("w", 3, "untimed rounds first")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: alternate [-n ROUNDS] [-w WARMUP] COMMAND...")
		os.Exit(2)
	}
	cmds := make([][]string, flag.NArg())
	for i, c := range flag.Args() {
		if cmds[i] = split(c); len(cmds[i]) == 0 {
			fmt.Fprintf(os.Stderr, "alternate: command %d is empty\n", i+1)
			os.Exit(2)
		}
	}
	times := make([][]time.Duration, len(cmds))
	for r := -*warmup; r < *rounds; r++ {
		for i, c := range cmds {
			env, args := environment(c)
			start := time.Now()
			cmd := exec.Command(args[0], args[1:]...)
			cmd.Env = env
			if err := cmd.Run(); err != nil {
				if _, ok := err.(*exec.ExitError); !ok {
					fmt.Fprintf(os.Stderr, "alternate: %s: %v\n", flag.Arg(i), err)
					os.Exit(1)
				}
			}
			if r >= 0 {
				times[i] = append(times[i], time.Since(start))
			}
		}
	}
	for i, t := range times {
		slices.Sort(t)
		at := func(q float64) float64 { return float64(t[int(q*float64(len(t)-1))]) / 1e6 }
		fmt.Printf("median %7.2f ms  p10 %7.2f  p90 %7.2f  %s\n", at(0.5), at(0.1), at(0.9), flag.Arg(i))
	}
}

// environment splits a command's leading NAME=VALUE words from the rest,
// and returns them appended to this process's environment (nil, the
// environment as it is, when there are none).
func environment(c []string) (env, args []string) {
	i := 0
	for i < len(c)-1 && strings.Contains(c[i], "=") && !strings.HasPrefix(c[i], "=") && !strings.ContainsAny(c[i][:strings.Index(c[i], "=")], "/.") {
		i++
	}
	if i == 0 {
		return nil, c
	}
	return append(os.Environ(), c[:i]...), c[i:]
}

// split cuts a command line at spaces; single and double quotes group,
// each literal inside the other.
func split(line string) []string {
	var out []string
	var word strings.Builder
	var quote rune // the quote open, or 0
	started := false
	for _, r := range line {
		switch {
		case (r == '\'' || r == '"') && (quote == 0 || quote == r):
			if quote == 0 {
				quote = r
			} else {
				quote = 0
			}
			started = true
		case r == ' ' && quote == 0:
			if started {
				out = append(out, word.String())
				word.Reset()
				started = false
			}
		default:
			word.WriteRune(r)
			started = true
		}
	}
	if started {
		out = append(out, word.String())
	}
	return out
}
