package remote

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/kbqdev/kbq/embedding"
)

// Fetch makes the model d available in the models directory: it returns
// its directory there, downloading the model first when it is missing.
// The archive and every file taken from it are checked against their
// SHA-256 before the model is put in place, in one rename, so a failed or
// interrupted download leaves nothing behind. progress, when set, is
// called with the bytes received so far.
func Fetch(ctx context.Context, hc *http.Client, models string, d embedding.Download, progress func(done, total int64)) (string, error) {
	if dir, err := embedding.Find(models, d.Name); err == nil {
		return dir, nil
	}
	if err := os.MkdirAll(models, 0o755); err != nil {
		return "", fmt.Errorf("make the models directory: %w", err)
	}
	tmp, err := os.MkdirTemp(models, "."+d.Name+".download-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	if err := download(ctx, hc, tmp, d, progress); err != nil {
		return "", fmt.Errorf("download %s from %s: %w (offline, put its files in %s by hand: see kbq's docs/embeddings.md)",
			d.Name, d.URL, err, filepath.Join(models, d.Name))
	}
	if err := d.Verify(tmp); err != nil {
		return "", err
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return "", err
	}
	dir := filepath.Join(models, d.Name)
	if err := os.Rename(tmp, dir); err != nil {
		if _, ferr := embedding.Find(models, d.Name); ferr == nil {
			return dir, nil // another process put it there first
		}
		return "", fmt.Errorf("put %s in place: %w", dir, err)
	}
	return dir, nil
}

// download fetches d's archive and writes its model files into dir.
func download(ctx context.Context, hc *http.Client, dir string, d embedding.Download, progress func(done, total int64)) error {
	if hc == nil {
		// A stalled server fails the download; a slow one does not.
		hc = &http.Client{Transport: &http.Transport{Proxy: http.ProxyFromEnvironment, ResponseHeaderTimeout: 30 * time.Second, TLSHandshakeTimeout: 30 * time.Second}}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, d.URL, nil)
	if err != nil {
		return err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("the server answered %s", resp.Status)
	}
	sum := sha256.New()
	body := &counter{r: io.LimitReader(resp.Body, d.Size+1), h: sum, total: d.Size, progress: progress}
	zr, err := gzip.NewReader(body)
	if err != nil {
		return fmt.Errorf("not a gzipped archive: %w", err)
	}
	want := make(map[string]embedding.DownloadFile, len(d.Files))
	for _, f := range d.Files {
		want[f.Archived] = f
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("read the archive: %w", err)
		}
		f, ok := want[h.Name]
		if !ok || h.Typeflag != tar.TypeReg {
			continue
		}
		if h.Size != f.Size {
			return fmt.Errorf("the archive's %s holds %d bytes, not %d", h.Name, h.Size, f.Size)
		}
		if err := writeFile(filepath.Join(dir, f.Name), tr); err != nil {
			return err
		}
		delete(want, h.Name)
	}
	for name := range want {
		return fmt.Errorf("the archive has no %s", name)
	}
	if _, err := io.Copy(io.Discard, body); err != nil {
		return err
	}
	if body.n != d.Size {
		return fmt.Errorf("received %d bytes, not %d", body.n, d.Size)
	}
	if got := hex.EncodeToString(sum.Sum(nil)); got != d.SHA256 {
		return fmt.Errorf("the archive has SHA-256 %s, not %s", got, d.SHA256)
	}
	return nil
}

func writeFile(path string, r io.Reader) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return fmt.Errorf("read the archive: %w", err)
	}
	return f.Close()
}

// counter hashes and counts what is read through it.
type counter struct {
	r        io.Reader
	h        hash.Hash
	n, total int64
	progress func(done, total int64)
}

func (c *counter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.h.Write(p[:n])
	c.n += int64(n)
	if c.progress != nil && n > 0 {
		c.progress(c.n, c.total)
	}
	return n, err
}
