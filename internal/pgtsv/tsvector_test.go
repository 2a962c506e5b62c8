package pgtsv

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kbqdev/kbq/internal/corpora"
	"github.com/kbqdev/kbq/internal/pgtest"
	"github.com/kbqdev/kbq/internal/testreq"
)

func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.Stop()
	os.Exit(code)
}

// tricky are texts that take the parser through each of its token types
// and the corners between them.
var tricky = []string{
	Probe,
	"",
	"   ",
	"The quick brown foxes jumped over the lazy dogs",
	"I am running; THEY RAN; it's a dog's life, isn't it?",
	"Get-ChildItem -Path C:\\Windows -Recurse | Where-Object { $_.Length -gt 1kb }",
	"state-of-the-art self-contained e-mail re-run co-op x-1 1-x 1-2-3 a--b a- -a --",
	"foo-bar-baz foo-1bar foo-bar1 1foo-bar 12-34ab ab-12cd-ef",
	"mail me at john.doe@example.com or jane_doe@mail.example.co.uk, not @here or a@b",
	"see http://example.com/path/to?q=1&x=2#frag and https://www.postgresql.org:5432/docs/ or ftp://x.y",
	"hosts: example.com www.example.com:8080 localhost 192.168.0.1 a-b.c_d.com foo..bar",
	"files: /usr/local/bin ./relative ../up ~/home ~user/x /a/b.c file.txt .hidden a/b/c.d.e",
	"numbers: 1 12 -3 +4 1.5 -2.25 .5 1e10 2E-3 -4.5e+6 1.2.3 10.0.1 v1.2.3 3.14.15.92",
	"version 1.2.3.4 and 1.2. and 1..2 and 1.2.3a",
	"<p class=\"x\">Hello <b>world</b></p> <br/> <!-- comment --> <!DOCTYPE html> <?xml version=\"1.0\"?>",
	"<script>var hidden = 1;</script> visible <style>.x{}</style> shown </SCRIPT> <Script> gone",
	"entities: &amp; &lt;tag&gt; &#123; &#x1F; &nbsp &bogus; &a.b-c:d_e;",
	"under_score snake_case_name __init__ _private trailing_",
	"CamelCase ALLCAPS mIxEd iPhone O'Neil rock'n'roll",
	"tabs\tand\nnewlines\r\nand\vvertical\ffeeds",
	"punct!!! ??? ... ,,, ;;; ::: ((())) [[]] {{}} ``` ''' \"\"\" *** ### @@@ $$$ %%% ^^^ |||",
	"stopwords only: the a an and or of to in is it",
	"generously generation generic communism arsenal news skies dying lying tying",
	"repeated repeated repeated words words words",
	"a:b a::b http:/x https:// mailto:x@y.z urn:isbn:123",
	"1a 2b3 a1b2c3 42nd 3rd-party 2-factor x86_64 utf-8 sha256",
	"C++ C# .NET F# node.js Vue.js ASP.NET v2.0-beta",
	"<a href='x'>link</a> <img src=\"a.png\" alt='b'/> <div data-x=1>",
	"&",
	"<",
	"-",
	"-1",
	".",
	"~",
	"/",
	"a",
	"1",
	"x@",
	"@x",
}

// randomTexts are texts of characters the parser treats specially, in
// random order.
func randomTexts(n int) []string {
	const alphabet = "aeiouxyzABCT0129 \t\n.-_/@:~&#;<>!?'\"=+%,ebE"
	r := rand.New(rand.NewPCG(1, 2))
	words := []string{"http", "https", "www", "com", "script", "style", "the", "running", "<!--", "-->", "</script>", "<style>", "//", "x"}
	out := make([]string, n)
	for i := range out {
		var b strings.Builder
		for range r.IntN(60) {
			if r.IntN(5) == 0 {
				b.WriteString(words[r.IntN(len(words))])
			} else {
				b.WriteByte(alphabet[r.IntN(len(alphabet))])
			}
		}
		out[i] = b.String()
	}
	return out
}

// repoTexts are the repository's own documents, with spaces for their
// characters outside ASCII.
func repoTexts(t *testing.T) []string {
	var out []string
	for _, pattern := range []string{"../../*.md", "../../docs/*.md", "../../.kb/*/*.md", "../../.kb/*.md"} {
		paths, _ := filepath.Glob(pattern)
		for _, p := range paths {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, asciiOnly(string(b)))
		}
	}
	return out
}

// asciiOnly replaces the characters of s outside ASCII with spaces.
func asciiOnly(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 0x80 || r == 0 {
			return ' '
		}
		return r
	}, s)
}

// serverTSVectors asks the server for to_tsvector('english', text) of
// each text, in tsvectorsend's form.
func serverTSVectors(t *testing.T, texts []string) [][]byte {
	t.Helper()
	conn := pgtest.Connect(t, pgtest.DB(t))
	rows, err := conn.Query(context.Background(), `SELECT tsvectorsend(to_tsvector('english', s))
		FROM unnest($1::text[]) WITH ORDINALITY AS u (s, n) ORDER BY n`, texts)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	for rows.Next() {
		var b []byte
		if err := rows.Scan(&b); err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// Every ASCII text gives exactly the server's tsvector.
func TestEnglishIsTheServers(t *testing.T) {
	texts := append(append(append([]string{}, tricky...), randomTexts(3000)...), repoTexts(t)...)
	want := serverTSVectors(t, texts)
	enc := NewEncoder()
	bad := 0
	for i, text := range texts {
		got, ok := enc.English(text)
		if !ok {
			t.Errorf("English(%.60q) = false, want a tsvector", text)
			continue
		}
		if !bytes.Equal(got, want[i]) {
			if bad++; bad <= 5 {
				t.Errorf("English(%.200q):\n got %s\nwant %s", text, show(got), show(want[i]))
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d texts differ from the server's", bad, len(texts))
	}
}

// show writes a tsvector in tsvectorsend's form as the server prints one.
func show(b []byte) string {
	n := binary.BigEndian.Uint32(b)
	b = b[4:]
	var out []string
	for range n {
		end := bytes.IndexByte(b, 0)
		word := string(b[:end])
		b = b[end+1:]
		np := binary.BigEndian.Uint16(b)
		b = b[2:]
		var pos []string
		for range np {
			pos = append(pos, fmt.Sprint(binary.BigEndian.Uint16(b)))
			b = b[2:]
		}
		out = append(out, fmt.Sprintf("'%s':%s", word, strings.Join(pos, ",")))
	}
	return strings.Join(out, " ")
}

func TestEnglishLeavesToTheServer(t *testing.T) {
	var many strings.Builder // over 1 MB of lexemes and positions
	for i := range 200000 {
		fmt.Fprintf(&many, "w%d ", i)
	}
	for _, text := range []string{"naïve café", "smart ’quotes’", "nul\x00byte", many.String()} {
		if _, ok := NewEncoder().English(text); ok {
			t.Errorf("English(%.40q) computed a tsvector, want it left to the server", text)
		}
	}
}

// The shared corpora's documents and SciFact's abstracts, with spaces for
// their characters outside ASCII, give the server's tsvectors.
func TestEnglishOnTheCorpora(t *testing.T) {
	shared := filepath.Join("..", "..", "..", "shared")
	var texts []string
	for _, corpus := range []string{"powershell-docs.tar.gz", "hugo-docs.tar.gz"} {
		err := corpora.Markdown(filepath.Join(shared, "corpora", corpus), func(_ string, data []byte) {
			texts = append(texts, asciiOnly(string(data)))
		})
		if os.IsNotExist(err) {
			testreq.Skip(t, testreq.Corpora, "the shared corpora are not there")
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	scifact, err := os.ReadFile(filepath.Join(shared, "datasets", "scifact", "corpus.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range bytes.Split(bytes.TrimSpace(scifact), []byte("\n")) {
		var doc struct{ Title, Text string }
		if err := json.Unmarshal(line, &doc); err != nil {
			t.Fatal(err)
		}
		texts = append(texts, asciiOnly(doc.Title+" "+doc.Text))
	}
	want := serverTSVectors(t, texts)
	enc := NewEncoder()
	bad := 0
	for i, text := range texts {
		got, ok := enc.English(text)
		if !ok || !bytes.Equal(got, want[i]) {
			if bad++; bad <= 3 {
				t.Errorf("English(%.200q) differs:\n got %s\nwant %s", text, show(got), show(want[i]))
			}
		}
	}
	t.Logf("%d texts", len(texts))
	if bad > 0 {
		t.Errorf("%d of %d texts differ from the server's", bad, len(texts))
	}
}

func BenchmarkEnglish(b *testing.B) {
	var texts []string
	size := 0
	err := corpora.Markdown(filepath.Join("..", "..", "..", "shared", "corpora", "powershell-docs.tar.gz"), func(_ string, data []byte) {
		texts = append(texts, asciiOnly(string(data)))
		size += len(data)
	})
	if err != nil {
		b.Skip(err)
	}
	enc := NewEncoder()
	b.SetBytes(int64(size))
	for b.Loop() {
		for _, text := range texts {
			enc.English(text)
		}
	}
}

// FuzzEnglish checks that any text either is left to the server or gives
// a well-formed tsvector: lexemes sorted and distinct, each with 1 to 255
// positions, ascending, from 1 to 16383.
func FuzzEnglish(f *testing.F) {
	for _, s := range tricky {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		b, ok := NewEncoder().English(text)
		if !ok {
			return
		}
		n := binary.BigEndian.Uint32(b)
		b = b[4:]
		prev := ""
		for i := range n {
			end := bytes.IndexByte(b, 0)
			if end < 0 {
				t.Fatalf("lexeme %d not terminated", i)
			}
			word := string(b[:end])
			if i > 0 && word <= prev {
				t.Fatalf("lexeme %q after %q", word, prev)
			}
			prev, b = word, b[end+1:]
			np := binary.BigEndian.Uint16(b)
			if np < 1 || np > maxPositions-1 {
				t.Fatalf("%q has %d positions", word, np)
			}
			last := uint16(0)
			for range np {
				p := binary.BigEndian.Uint16(b[2:])
				if p <= last || p >= maxEntryPos {
					t.Fatalf("%q at %d after %d", word, p, last)
				}
				last, b = p, b[2:]
			}
			b = b[2:]
		}
		if len(b) != 0 {
			t.Fatalf("%d bytes after the lexemes", len(b))
		}
	})
}
