// Package trust decides which key, if any, a request to an embeddings or
// language-model endpoint carries. A repository's configuration, an
// artifact's manifest and a database row may name an endpoint, but they
// never choose which of the user's secrets is sent, nor send one to a host
// the user did not name:
//
//   - the key comes from a variable the user names: KBQ_EMBED_KEY (or
//     KBQ_LLM_KEY), else OPENAI_API_KEY, or the key_env of the endpoint's
//     entry in the user's own configuration;
//   - it goes only to an endpoint the user named: on the command line, in
//     KBQ_EMBED_URL (or KBQ_LLM_URL), in the user's configuration, or
//     kbq's default, https://api.openai.com/v1;
//   - any other endpoint is called without credentials.
//
// The user's configuration is $KBQ_HOME/config.yaml, else
// $XDG_CONFIG_HOME/kbq/config.yaml, else ~/.config/kbq/config.yaml:
//
//	endpoints:
//	  - url: http://gpu-box:11434/v1
//	    key_env: GPU_BOX_KEY
package trust

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/kbqdev/kbq/internal/userdir"
)

// DefaultURL is the endpoint of the openai provider when nothing names one.
const DefaultURL = "https://api.openai.com/v1"

// A Kind of endpoint: each has its own variables.
type Kind struct {
	// URLEnv names the variable with the user's endpoint, KeyEnv the one
	// with its key.
	URLEnv, KeyEnv string
}

// The kinds of endpoint kbq calls.
var (
	Embeddings = Kind{URLEnv: "KBQ_EMBED_URL", KeyEnv: "KBQ_EMBED_KEY"}
	LLM        = Kind{URLEnv: "KBQ_LLM_URL", KeyEnv: "KBQ_LLM_KEY"}
)

// An Endpoint is one the user trusts, from their configuration.
type Endpoint struct {
	URL    string `yaml:"url"`
	KeyEnv string `yaml:"key_env"`
}

// Config is the user's own configuration of endpoints.
type Config struct {
	Endpoints []Endpoint `yaml:"endpoints"`

	file   string
	getenv func(string) string
}

// File returns where the user's configuration is kept.
func File(getenv func(string) string) string {
	return userdir.ConfigFile(getenv, "config.yaml")
}

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// Load reads the user's configuration; a missing file trusts only what the
// environment and kbq's default name.
func Load(getenv func(string) string) (*Config, error) {
	c := &Config{file: File(getenv), getenv: getenv}
	if c.file == "" {
		return c, nil
	}
	data, err := os.ReadFile(c.file)
	if errors.Is(err, os.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return nil, err
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(c); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: %v (endpoints: is a list of url: and key_env:)", c.file, err)
	}
	for i, e := range c.Endpoints {
		if _, err := normal(e.URL); err != nil {
			return nil, fmt.Errorf("%s: endpoint %d: %v", c.file, i+1, err)
		}
		if e.KeyEnv != "" && !envName.MatchString(e.KeyEnv) {
			return nil, fmt.Errorf("%s: endpoint %d: key_env names the variable that holds the key, such as OPENAI_API_KEY; never write the key itself here", c.file, i+1)
		}
	}
	return c, nil
}

// Must is Load for callers that go on without the user's configuration
// when it cannot be read; warn is told why.
func Must(getenv func(string) string, warn func(error)) *Config {
	c, err := Load(getenv)
	if err != nil {
		warn(err)
		return &Config{getenv: getenv}
	}
	return c
}

// A Grant is what a request to an endpoint carries.
type Grant struct {
	// Key is sent as a bearer token; "" sends none.
	Key string
	// Env names where the key is (or would be) found, for advice.
	Env string
	// Trusted reports whether the user named the endpoint.
	Trusted bool
	// Advice says how to trust an endpoint that is not: for the error of
	// one that wants a key.
	Advice string
}

// Key returns what a request of kind to endpoint u carries. named is true
// when the user gave u on the command line.
func (c *Config) Key(kind Kind, u string, named bool) Grant {
	nu, err := normal(u)
	if err != nil {
		return Grant{Env: kind.KeyEnv, Advice: c.advice(kind, u)}
	}
	trusted := named || nu == must(DefaultURL)
	if env := c.getenv(kind.URLEnv); env != "" {
		if n, err := normal(env); err == nil && n == nu {
			trusted = true
		}
	}
	for _, e := range c.Endpoints {
		if n, _ := normal(e.URL); n != nu {
			continue
		}
		if e.KeyEnv != "" {
			return Grant{Key: c.getenv(e.KeyEnv), Env: e.KeyEnv, Trusted: true}
		}
		trusted = true
	}
	if !trusted {
		return Grant{Env: kind.KeyEnv, Advice: c.advice(kind, u)}
	}
	for _, name := range []string{kind.KeyEnv, "OPENAI_API_KEY"} {
		if key := c.getenv(name); key != "" {
			return Grant{Key: key, Env: name, Trusted: true}
		}
	}
	return Grant{Env: kind.KeyEnv, Trusted: true}
}

func (c *Config) advice(kind Kind, u string) string {
	where := c.file
	if where == "" {
		where = "$KBQ_HOME/config.yaml"
	}
	return fmt.Sprintf("kbq sends keys only to endpoints you name, and %s was named by the repository or artifact: trust it with %s=%s, or under endpoints: in %s (url: and key_env:)",
		u, kind.URLEnv, u, where)
}

// normal is u as endpoints are compared: scheme and host in lower case,
// without a trailing slash.
func normal(u string) (string, error) {
	p, err := url.Parse(strings.TrimSpace(u))
	if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
		return "", fmt.Errorf("%q is not an http:// or https:// URL", u)
	}
	if p.User != nil {
		return "", fmt.Errorf("%q holds credentials: name the key's variable in key_env instead", u)
	}
	p.Scheme, p.Host = strings.ToLower(p.Scheme), strings.ToLower(p.Host)
	p.Path = strings.TrimRight(p.Path, "/")
	p.RawPath, p.Fragment, p.RawFragment = "", "", ""
	return p.String(), nil
}

func must(u string) string {
	n, err := normal(u)
	if err != nil {
		panic(err)
	}
	return n
}
