package embedding

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kbqdev/kbq/embedding/embeddingtest"
)

func tinyTokenizer(t testing.TB) *Tokenizer {
	t.Helper()
	dir := t.TempDir()
	m := embeddingtest.Default
	m.Words = append(slices.Clone(embeddingtest.DefaultWords), "cafe", "机", "器")
	if err := m.Write(dir); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "tokenizer.json"))
	if err != nil {
		t.Fatal(err)
	}
	tok, err := ParseTokenizer(data)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// pieces spells the ids of text back, without [CLS] and [SEP].
func pieces(tok *Tokenizer, text string, max int) []string {
	names := make(map[int32]string, tok.vocab.len())
	for s, id := range tok.vocab.all() {
		names[id] = s
	}
	var out []string
	for _, id := range tok.Encode(text, max) {
		out = append(out, names[id])
	}
	return out
}

func TestTokenizer(t *testing.T) {
	tok := tinyTokenizer(t)
	for _, tc := range []struct {
		name, text string
		want       string
	}{
		{"words", "Deploy the release", "deploy the release"},
		{"pieces", "deploying searches", "deploy ##ing search ##e ##s"},
		{"punctuation split", "roll-back, (release)!", "roll - back , ( release ) !"},
		{"ASCII symbols are punctuation", "a$b+c", "a $ b + c"},
		{"accents stripped", "Café naïve", "cafe n ##a ##i ##v ##e"},
		{"CJK characters are words", "机器学", "机 器 [UNK]"},
		{"controls dropped, whitespace kept", "roll\x00back\u200b\tthe\u00a0release", "rollback the release"},
		{"unknown characters", "deploy ☃ now", "deploy [UNK] n ##o ##w"},
		{"invalid UTF-8 after a BOM", "\ufeffdeploy \xff\xferelease", "deploy release"},
		{"a word over 100 characters", strings.Repeat("a", 101) + " deploy", "[UNK] deploy"},
		{"empty", "", ""},
		{"only punctuation", "?!", "? !"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := pieces(tok, tc.text, MaxTokens)
			want := append(append([]string{"[CLS]"}, strings.Fields(tc.want)...), "[SEP]")
			if !slices.Equal(got, want) {
				t.Errorf("%q: %q, want %q", tc.text, got, want)
			}
		})
	}
	t.Run("cut at max", func(t *testing.T) {
		got := pieces(tok, strings.Repeat("deploy ", 300), 16)
		if len(got) != 16 || got[0] != "[CLS]" || got[15] != "[SEP]" || got[14] != "deploy" {
			t.Errorf("%q", got)
		}
	})
}

// TestTokenizerFiles rejects what the tokenizer cannot read faithfully.
func TestTokenizerFiles(t *testing.T) {
	for _, tc := range []struct{ name, data, want string }{
		{"BPE", `{"model": {"type": "BPE", "vocab": {}}}`, "the tokenizer is BPE; only WordPiece"},
		{"Unigram", `{"model": {"type": "Unigram"}}`, "the tokenizer is Unigram"},
		{"other normalizer", `{"normalizer": {"type": "NFC"}, "model": {"type": "WordPiece", "unk_token": "[UNK]", "vocab": {"[UNK]": 0}}}`, "the normalizer is NFC"},
		{"no special tokens", `{"model": {"type": "WordPiece", "unk_token": "[UNK]", "vocab": {"[UNK]": 0}}}`, "no [CLS] token"},
		{"not JSON", `<html>`, "not a tokenizer.json"},
		{"bad vocabulary", `{"model": {"type": "WordPiece", "unk_token": "[UNK]", "vocab": {"[UNK]": "zero"}}}`, "model.vocab: offset"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseTokenizer([]byte(tc.data))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// TestParseVocab holds the vocabulary reader to encoding/json's meaning,
// escapes included.
func TestParseVocab(t *testing.T) {
	tokens, ids, err := parseVocab([]byte(` { "a" : 1, "\"q\"": 2, "\u00e9": 3, "b\\": 40, "a": 5 } `))
	if err != nil {
		t.Fatal(err)
	}
	got, err := buildVocab(tokens, ids)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int32{"a": 5, `"q"`: 2, "é": 3, `b\`: 40}
	if got.len() != len(want) {
		t.Fatalf("%d tokens, want %v", got.len(), want)
	}
	for k, v := range want {
		if id, ok := got.lookup(k); !ok || id != v {
			t.Errorf("%q: %d (%v), want %d", k, id, ok, v)
		}
	}
	if _, ok := got.lookup("b"); ok {
		t.Error("a token not in the vocabulary was found")
	}
	for _, bad := range []string{`[1]`, `{"a" 1}`, `{"a": 1,}`, `{"a": 1`, `{"a": 99999999999}`, `{"a`} {
		if _, _, err := parseVocab([]byte(bad)); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

func FuzzTokenizer(f *testing.F) {
	tok := tinyTokenizer(f)
	for _, s := range []string{"deploy the release", "Café 机器", "\xff\xfe", strings.Repeat("x", 120), "a-b.c"} {
		f.Add(s, 16)
	}
	f.Fuzz(func(t *testing.T, text string, max int) {
		max = 2 + max&0xff
		ids := tok.Encode(text, max)
		if len(ids) < 2 || len(ids) > max || ids[0] != tok.cls || ids[len(ids)-1] != tok.sep {
			t.Fatalf("%q: ids %v", text, ids)
		}
		for _, id := range ids {
			if int(id) >= tok.vocab.len() || id < 0 {
				t.Fatalf("%q: id %d outside the vocabulary", text, id)
			}
		}
	})
}
