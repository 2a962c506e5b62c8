package remote

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kbqdev/kbq/embedding"
	"github.com/kbqdev/kbq/internal/testreq"
)

// fakeEndpoint answers embeddings requests with vectors of dims values
// whose first value is the text's length, in reverse order with indices,
// after answer has had its say: it returns true when it wrote the answer.
func fakeEndpoint(t *testing.T, dims int, answer func(w http.ResponseWriter, n int) bool) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if r.URL.Path != "/v1/embeddings" || r.Method != http.MethodPost {
			http.Error(w, `{"error":{"message":"no such route"}}`, http.StatusNotFound)
			return
		}
		var req request
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if answer != nil && answer(w, len(req.Input)) {
			return
		}
		type item struct {
			Index     int       `json:"index"`
			Embedding []float64 `json:"embedding"`
		}
		var resp struct {
			Data []item `json:"data"`
		}
		for i := len(req.Input) - 1; i >= 0; i-- {
			v := make([]float64, dims)
			v[0] = float64(len(req.Input[i]) + 1)
			v[1] = 1
			resp.Data = append(resp.Data, item{i, v})
		}
		json.NewEncoder(w).Encode(resp)
	}))
	t.Cleanup(srv.Close)
	return srv, &calls
}

func TestClientBatchesAndNormalises(t *testing.T) {
	srv, calls := fakeEndpoint(t, 8, nil)
	c := &Client{URL: srv.URL + "/v1", Model: "m", Batch: 2}
	texts := []string{"a", "bb", "ccc", "dddd", "eeeee"}
	vecs, err := c.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	if got := calls.Load(); got != 3 {
		t.Errorf("%d requests for 5 texts in batches of 2, want 3", got)
	}
	if len(vecs) != len(texts) || c.Dims != 8 {
		t.Fatalf("%d vectors of %d values, want 5 of 8", len(vecs), c.Dims)
	}
	for i, v := range vecs {
		x, y := float64(len(texts[i])+1), 1.0
		n := math.Hypot(x, y)
		if math.Abs(float64(v[0])-x/n) > 1e-6 || math.Abs(float64(v[1])-y/n) > 1e-6 {
			t.Errorf("vector %d starts %v, want the unit vector of (%v, %v): out of order or not normalised", i, v[:2], x, y)
		}
	}
}

func TestClientRetries(t *testing.T) {
	failures := atomic.Int32{}
	failures.Store(2)
	srv, calls := fakeEndpoint(t, 4, func(w http.ResponseWriter, n int) bool {
		if failures.Add(-1) < 0 {
			return false
		}
		w.Header().Set("Retry-After", "0")
		http.Error(w, `{"error":{"message":"slow down"}}`, http.StatusTooManyRequests)
		return true
	})
	c := &Client{URL: srv.URL + "/v1", Model: "m", Backoff: time.Millisecond}
	if _, err := c.Embed(context.Background(), []string{"x"}); err != nil {
		t.Fatalf("two 429s, then an answer: %v", err)
	}
	if got := calls.Load(); got != 3 {
		t.Errorf("%d requests, want 3", got)
	}
}

func TestClientErrors(t *testing.T) {
	status := func(code int, body string) func(http.ResponseWriter, int) bool {
		return func(w http.ResponseWriter, _ int) bool {
			http.Error(w, body, code)
			return true
		}
	}
	tests := []struct {
		name   string
		dims   int
		answer func(http.ResponseWriter, int) bool
		client Client
		texts  int
		want   []string
		calls  int32
	}{
		{"server error every time", 4, status(500, `{"error":{"message":"model crashed"}}`), Client{Retries: 2}, 1,
			[]string{"answered 500 Internal Server Error: model crashed", "tried 3 times"}, 3},
		{"no key", 4, status(401, `{"error":"unauthorized"}`), Client{KeyEnv: "KBQ_EMBED_KEY"}, 1,
			[]string{"401 Unauthorized: unauthorized", "set KBQ_EMBED_KEY"}, 1},
		{"unknown model", 4, status(404, `{"error":"model \"m\" not found, try pulling it first"}`), Client{}, 1,
			[]string{"404 Not Found: model", `check the model name "m"`}, 1},
		{"wrong count", 4, func(w http.ResponseWriter, n int) bool {
			fmt.Fprint(w, `{"data":[{"index":0,"embedding":[1,0,0,0]}]}`)
			return true
		}, Client{}, 2, []string{"1 vectors for 2 texts"}, 1},
		{"wrong dimension", 4, nil, Client{Dims: 3}, 1, []string{"a vector of 4 values, where model m gave 3"}, 1},
		{"zero vector", 4, func(w http.ResponseWriter, n int) bool {
			fmt.Fprint(w, `{"data":[{"index":0,"embedding":[0,0,0,0]}]}`)
			return true
		}, Client{}, 1, []string{"no direction"}, 1},
		{"not json", 4, func(w http.ResponseWriter, n int) bool {
			fmt.Fprint(w, `<html>hello</html>`)
			return true
		}, Client{}, 1, []string{"not an embeddings response"}, 1},
		{"repeated index", 4, func(w http.ResponseWriter, n int) bool {
			fmt.Fprint(w, `{"data":[{"index":0,"embedding":[1,0,0,0]},{"index":0,"embedding":[1,0,0,0]}]}`)
			return true
		}, Client{}, 2, []string{"indices are not 0 to 1"}, 1},
		{"too slow", 4, func(w http.ResponseWriter, n int) bool {
			time.Sleep(200 * time.Millisecond)
			return false
		}, Client{Timeout: 20 * time.Millisecond, Retries: 1}, 1, []string{"did not answer within 20ms", "tried 2 times"}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, calls := fakeEndpoint(t, tt.dims, tt.answer)
			c := tt.client
			c.URL, c.Model, c.Backoff = srv.URL+"/v1", "m", time.Millisecond
			texts := make([]string, tt.texts)
			vecs, err := c.Embed(context.Background(), texts)
			if err == nil {
				t.Fatalf("got %d vectors, want an error", len(vecs))
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if !strings.Contains(err.Error(), srv.URL+"/v1/embeddings") {
				t.Errorf("error %q does not name the endpoint", err)
			}
			if got := calls.Load(); got != tt.calls {
				t.Errorf("%d requests, want %d", got, tt.calls)
			}
		})
	}
}

func TestClientRefused(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	c := &Client{URL: "http://" + addr + "/v1", Model: "m", Retries: -1}
	_, err = c.Embed(context.Background(), []string{"x"})
	if err == nil || !strings.Contains(err.Error(), "is the server running") {
		t.Fatalf("error %v, want one that asks whether the server runs", err)
	}
}

func TestCheckURL(t *testing.T) {
	for u, ok := range map[string]bool{
		"http://localhost:11434/v1":            true,
		"https://api.openai.com/v1/":           true,
		"ftp://example.com/v1":                 false,
		"localhost:11434":                      false,
		"http://localhost:11434/v1/embeddings": false,
		"http://":                              false,
	} {
		if err := CheckURL(u); (err == nil) != ok {
			t.Errorf("CheckURL(%q) = %v, want ok=%v", u, err, ok)
		}
	}
}

// archive is a gzipped tar of files, and a Download of it at url.
func archive(t *testing.T, files map[string]string) ([]byte, embedding.Download) {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	d := embedding.Download{Name: "tiny"}
	for _, name := range []string{"package/README", "package/model/config.json", "package/model/tokenizer.json", "package/model/model.safetensors"} {
		body, ok := files[name]
		if !ok {
			continue
		}
		tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg})
		tw.Write([]byte(body))
		if name != "package/README" {
			sum := sha256.Sum256([]byte(body))
			d.Files = append(d.Files, embedding.DownloadFile{Archived: name, Name: filepath.Base(name), SHA256: hex.EncodeToString(sum[:]), Size: int64(len(body))})
		}
	}
	tw.Close()
	zw.Close()
	sum := sha256.Sum256(buf.Bytes())
	d.SHA256, d.Size = hex.EncodeToString(sum[:]), int64(buf.Len())
	return buf.Bytes(), d
}

func TestFetch(t *testing.T) {
	files := map[string]string{
		"package/README":                  "not a model file",
		"package/model/config.json":       `{"hidden_size": 8}`,
		"package/model/tokenizer.json":    `{"model": {}}`,
		"package/model/model.safetensors": strings.Repeat("w", 5000),
	}
	data, good := archive(t, files)
	var served atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		switch r.URL.Path {
		case "/model.tgz":
			w.Write(data)
		case "/short.tgz":
			w.Write(data[:len(data)/2])
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	good.URL = srv.URL + "/model.tgz"

	t.Run("fetched and verified", func(t *testing.T) {
		models := t.TempDir()
		var last int64
		dir, err := Fetch(context.Background(), nil, models, good, func(done, total int64) { last = done })
		if err != nil {
			t.Fatal(err)
		}
		if dir != filepath.Join(models, "tiny") || last != good.Size {
			t.Errorf("dir %s, progress ended at %d; want %s and %d", dir, last, filepath.Join(models, "tiny"), good.Size)
		}
		if err := good.Verify(dir); err != nil {
			t.Error(err)
		}
		if _, err := os.Stat(filepath.Join(dir, "README")); err == nil {
			t.Error("a file that is not the model's was extracted")
		}
		before := served.Load()
		if _, err := Fetch(context.Background(), nil, models, good, nil); err != nil || served.Load() != before {
			t.Errorf("a model in place was downloaded again (err %v)", err)
		}
	})

	bad := func(name string, mutate func(*embedding.Download), want string) {
		t.Run(name, func(t *testing.T) {
			models := t.TempDir()
			d := good
			d.Files = append([]embedding.DownloadFile(nil), good.Files...)
			mutate(&d)
			_, err := Fetch(context.Background(), nil, models, d, nil)
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("error %v, want one saying %q", err, want)
			}
			if !strings.Contains(err.Error(), "by hand") && strings.Contains(want, "archive") {
				t.Errorf("error %q does not say how to place the model offline", err)
			}
			left, _ := os.ReadDir(models)
			if len(left) != 0 {
				t.Errorf("a failed download left %v behind", left)
			}
		})
	}
	bad("archive of another hash", func(d *embedding.Download) { d.SHA256 = strings.Repeat("0", 64) }, "the archive has SHA-256")
	bad("file of another hash", func(d *embedding.Download) { d.Files[1].SHA256 = strings.Repeat("0", 64) }, "tokenizer.json has SHA-256")
	bad("cut short", func(d *embedding.Download) { d.URL = srv.URL + "/short.tgz" }, "archive")
	bad("not there", func(d *embedding.Download) { d.URL = srv.URL + "/gone.tgz" }, "404 Not Found")
	bad("file missing from the archive", func(d *embedding.Download) {
		d.Files = append(d.Files, embedding.DownloadFile{Archived: "package/model/vocab.txt", Name: "vocab.txt"})
	}, "the archive has no package/model/vocab.txt")
}

func TestCatalogModelIsWhatCIFetched(t *testing.T) {
	dir := os.Getenv("KBQ_TEST_MODEL")
	if dir == "" {
		testreq.Skip(t, testreq.Model, "KBQ_TEST_MODEL is not set: no all-MiniLM-L6-v2 to check the catalog against")
	}
	d, ok := embedding.Known("all-MiniLM-L6-v2")
	if !ok {
		t.Fatal("all-MiniLM-L6-v2 is not in the catalog")
	}
	if err := d.Verify(dir); err != nil {
		t.Fatal(err)
	}
}
