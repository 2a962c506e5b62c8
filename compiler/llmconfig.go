package compiler

import (
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/kbqdev/kbq/compiler/checks"
	"go.yaml.in/yaml/v3"
)

// LLMConfig is the llm section of a configuration: the OpenAI-compatible
// chat endpoint kbc compact asks for summaries. Fields the file leaves out
// are zero; defaults fill them in.
type LLMConfig struct {
	URL     string // the API's base, such as http://localhost:11434/v1
	Model   string
	Timeout time.Duration
	Retries int // -1 for none
}

var llmKeys = []string{"url", "model", "key_env", "timeout", "retries"}

// DefaultCompactThreshold is how many tokens (about four bytes each) a
// category of knowledge holds before kbc check suggests compacting it.
const DefaultCompactThreshold = checks.DefaultCompactThreshold

func (p configParser) llm(n *yaml.Node) {
	l := &LLMConfig{}
	ok := true
	p.mapping(n, "llm", llmKeys, func(key string, v *yaml.Node) {
		if !p.scalar(v, "llm."+key) {
			ok = false
			return
		}
		switch key {
		case "url":
			l.URL = p.endpointURL(v, "llm", &ok)
		case "model":
			l.Model = v.Value
		case "key_env":
			p.keyEnv(v, "llm", &ok)
		case "timeout":
			l.Timeout = p.timeout(v, "llm", &ok)
		case "retries":
			r, err := strconv.Atoi(v.Value)
			if err != nil || r < 0 || r > 10 {
				p.errorf(v, "llm.retries: %q is not a number of retries from 0 to 10", v.Value)
				ok = false
			}
			l.Retries = r
			if r == 0 {
				l.Retries = -1
			}
		}
	})
	if n.Kind != yaml.MappingNode || !ok {
		return
	}
	if l.URL == "" || l.Model == "" {
		p.errorf(n, "llm: name the endpoint and its model, such as url: http://localhost:11434/v1 and model: llama3.1")
		return
	}
	p.c.LLM = l
}

// compactThreshold reads compact_threshold: a number of tokens, or 0 for
// no warning.
func (p configParser) compactThreshold(v *yaml.Node) {
	if !p.scalar(v, "compact_threshold") {
		return
	}
	n, err := strconv.Atoi(strings.ReplaceAll(v.Value, "_", ""))
	if err != nil || n < 0 {
		p.errorf(v, "compact_threshold: %q is not a number of tokens (0 turns the warning off)", v.Value)
		return
	}
	p.c.CompactThreshold = n
	if n == 0 {
		p.c.CompactThreshold = -1
	}
}

// scalar reports whether v is a value, saying so when it is not.
func (p configParser) scalar(v *yaml.Node, key string) bool {
	if v.Kind != yaml.ScalarNode || v.ShortTag() == "!!null" || strings.TrimSpace(v.Value) == "" {
		p.errorf(v, "%s must be a value, not %s", key, describeNode(v))
		return false
	}
	return true
}

// endpointURL reads the url of section: an http:// or https:// URL.
func (p configParser) endpointURL(v *yaml.Node, section string, ok *bool) string {
	if u, err := url.Parse(v.Value); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		p.errorf(v, "%s.url: %q is not an http:// or https:// URL such as http://localhost:11434/v1", section, v.Value)
		*ok = false
	}
	return v.Value
}

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// keyEnv warns of the key_env of section: a repository does not choose
// which of the user's variables is sent, nor where. The key comes from
// the user's own variables and configuration (package internal/trust).
func (p configParser) keyEnv(v *yaml.Node, section string, ok *bool) {
	if !envName.MatchString(v.Value) {
		p.errorf(v, "%s.key_env names the environment variable that holds the key, such as OPENAI_API_KEY; never write the key itself here", section)
		*ok = false
		return
	}
	own := "KBQ_EMBED_KEY"
	if section == "llm" {
		own = "KBQ_LLM_KEY"
	}
	p.report(v.Line, v.Column, Warning, section+".key_env is not read: a repository does not choose which of your variables is sent; put the key in "+own+", or trust the endpoint with its key_env under endpoints: in your own $KBQ_HOME/config.yaml")
}

// timeout reads the timeout of section: a positive duration.
func (p configParser) timeout(v *yaml.Node, section string, ok *bool) time.Duration {
	d, err := time.ParseDuration(v.Value)
	if err != nil || d <= 0 {
		p.errorf(v, "%s.timeout: %q is not a duration such as 30s or 2m", section, v.Value)
		*ok = false
	}
	return d
}
