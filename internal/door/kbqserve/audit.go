package kbqserve

import (
	"encoding/json"
	"io"
	"sync"
	"time"

	"github.com/kbqdev/kbq/internal/access"
	"github.com/kbqdev/kbq/internal/door/reader"
)

// auditLog writes a JSON line for each request of a caller identified:
// who, through which door, which repositories were searched and how many
// results went out; the query text only when asked to.
type auditLog struct {
	mu      sync.Mutex
	w       io.Writer
	queries bool
}

type auditLine struct {
	Time      time.Time `json:"time"`
	Principal string    `json:"principal"`
	Via       string    `json:"via"`   // how the caller was identified: oidc, github, token
	Door      string    `json:"door"`  // http or mcp
	Op        string    `json:"op"`    // search, get, list, context, stats
	Repos     []string  `json:"repos"` // the repositories read for it
	Results   int       `json:"results"`
	Query     string    `json:"query,omitempty"`
}

// record logs one request of who; nothing for a server that asks no one.
func (a *auditLog) record(who *access.Principal, door, op string, b reader.Backend, results int, q string) {
	if a == nil || who == nil {
		return
	}
	line := auditLine{Time: time.Now().UTC(), Principal: who.Name, Via: who.Via, Door: door, Op: op, Repos: []string{}, Results: results}
	for _, p := range b.Parts() {
		if p.Name != "" {
			line.Repos = append(line.Repos, p.Name)
		}
	}
	if a.queries {
		line.Query = q
	}
	data, err := json.Marshal(line)
	if err != nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.w.Write(append(data, '\n'))
}
