package online

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/kbqdev/kbq/internal/safefs"
)

// An endpoint that fails to embed a query is not asked again for a while
// (a circuit breaker): every search meanwhile is lexical at once, with a
// note, instead of waiting out the timeout. The first failure rests the
// endpoint for breakerRest, each one after it twice as long, up to
// breakerMaxRest; one success closes the breaker. The state is kept in
// the process (a server) and in the user's cache (one kbq search after
// another), by endpoint.
const (
	breakerRest    = 30 * time.Second
	breakerMaxRest = 5 * time.Minute
)

// breakerState is an endpoint's record of failures.
type breakerState struct {
	Until    time.Time `json:"until"`
	Failures int       `json:"failures"`
	Error    string    `json:"error"`
}

// breakers are the endpoints' states, in the process and on disk.
type breakers struct {
	mu    sync.Mutex
	state map[string]breakerState
	now   func() time.Time
}

var endpointBreakers = &breakers{state: map[string]breakerState{}, now: time.Now}

// breakerDir is where the states are kept: $XDG_CACHE_HOME/kbq/endpoints,
// else ~/.cache/kbq/endpoints.
func breakerDir(getenv func(string) string) string {
	if x := getenv("XDG_CACHE_HOME"); x != "" {
		return filepath.Join(x, "kbq", "endpoints")
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".cache", "kbq", "endpoints")
	}
	return ""
}

func (b *breakers) file(dir, url string) string {
	if dir == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(url))
	return filepath.Join(dir, hex.EncodeToString(sum[:8])+".json")
}

// open returns why url is not to be asked now, nil when it may be. The
// record on disk is read once per endpoint and process.
func (b *breakers) open(dir, url string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	st, ok := b.state[url]
	if !ok {
		if data, err := os.ReadFile(b.file(dir, url)); err == nil {
			json.Unmarshal(data, &st)
		}
		b.state[url] = st
	}
	now := b.now()
	if now.Before(st.Until) {
		return fmt.Errorf("the embeddings endpoint %s failed %d %s in a row (%s); kbq asks it again in %s",
			url, st.Failures, plural(st.Failures, "time", "times"), st.Error, st.Until.Sub(now).Round(time.Second))
	}
	return nil
}

// done records the outcome of asking url, which open was asked first.
func (b *breakers) done(dir, url string, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	st := b.state[url]
	file := b.file(dir, url)
	if err == nil {
		if st.Failures > 0 { // closed: the record goes
			b.state[url] = breakerState{}
			if file != "" {
				os.Remove(file)
			}
		}
		return
	}
	st.Failures++
	rest := min(breakerRest<<min(st.Failures-1, 10), breakerMaxRest)
	st.Until, st.Error = b.now().Add(rest), err.Error()
	b.state[url] = st
	if file != "" {
		if data, merr := json.Marshal(st); merr == nil && os.MkdirAll(dir, 0o755) == nil {
			safefs.Replace(file, data, 0o644)
		}
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
