package render

import "github.com/kbqdev/kbq/query/documents"

// ContextJSON is the JSON of kbq context --json and of the servers.
type ContextJSON struct {
	Dir  string `json:"dir"`
	Text string `json:"text"`
	// Sources are the context files included, in order.
	Sources []string `json:"sources"`
	// Index lists the documents of the knowledge index, ranked by IndexBy
	// ("use" or "importance").
	Index     []string `json:"index"`
	IndexBy   string   `json:"index_by,omitempty"`
	Warnings  []string `json:"warnings"`
	Truncated bool     `json:"truncated"`
	// Dropped lists the documents the cut left out in part or whole.
	Dropped []string `json:"dropped,omitempty"`
}

// NewContextJSON is the JSON of res, assembled for dir.
func NewContextJSON(dir string, res *documents.ContextResult) ContextJSON {
	out := ContextJSON{Dir: dir, Text: res.Text, Sources: []string{}, Index: []string{}, IndexBy: res.IndexBy,
		Warnings: []string{}, Truncated: res.Truncated, Dropped: res.Dropped}
	for _, sec := range res.Sections {
		out.Sources = append(out.Sources, sec.Paths...)
	}
	out.Index = append(out.Index, res.Index...)
	out.Warnings = append(out.Warnings, res.Warnings...)
	return out
}
