package trust

import (
	"os"
	"path/filepath"
	"testing"
)

func TestKey(t *testing.T) {
	home := t.TempDir()
	os.WriteFile(filepath.Join(home, "config.yaml"), []byte("endpoints:\n  - url: HTTP://Box:11434/v1/\n    key_env: BOX_KEY\n  - url: http://plain/v1\n"), 0o644)
	env := map[string]string{
		"KBQ_HOME": home, "BOX_KEY": "box", "KBQ_EMBED_KEY": "embed", "OPENAI_API_KEY": "openai",
		"KBQ_EMBED_URL": "http://mine/v1", "DEPLOY_TOKEN": "deploy",
	}
	c, err := Load(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		url   string
		named bool
		key   string
		ok    bool
	}{
		{"http://box:11434/v1", false, "box", true}, // the user's entry, its own variable
		{"http://plain/v1/", false, "embed", true},  // an entry without key_env
		{"http://mine/v1", false, "embed", true},    // KBQ_EMBED_URL
		{"https://api.openai.com/v1", false, "embed", true},
		{"http://attacker/v1", false, "", false},    // named only by a repository
		{"http://attacker/v1", true, "embed", true}, // named on the command line
		{"http://box:11434/v2", false, "", false},   // another path is another endpoint
		{"http://box.evil:11434/v1", false, "", false},
		{"http://u:p@box:11434/v1", false, "", false},
		{"not a url", false, "", false},
	} {
		g := c.Key(Embeddings, tt.url, tt.named)
		if g.Key != tt.key || g.Trusted != tt.ok {
			t.Errorf("%s (named %v): key %q trusted %v, want %q %v", tt.url, tt.named, g.Key, g.Trusted, tt.key, tt.ok)
		}
		if !g.Trusted && g.Advice == "" {
			t.Errorf("%s: no advice for an endpoint that is not trusted", tt.url)
		}
	}
	if g := c.Key(LLM, "http://mine/v1", false); g.Trusted {
		t.Error("KBQ_EMBED_URL trusts an endpoint for the language model")
	}
}

func TestLoadRefusesKeys(t *testing.T) {
	home := t.TempDir()
	os.WriteFile(filepath.Join(home, "config.yaml"), []byte("endpoints:\n  - url: http://x/v1\n    key_env: sk-abc123\n"), 0o644)
	if _, err := Load(func(k string) string { return map[string]string{"KBQ_HOME": home}[k] }); err == nil {
		t.Error("a key written as key_env was accepted")
	}
}
