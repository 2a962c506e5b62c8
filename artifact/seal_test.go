package artifact

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// seal makes a manifest of header fields (JSON members, without braces)
// and a document list (from documentsKey to the end) that carries valid
// checksums, as Encode's would, whatever layout the fields have.
func seal(fields, docs string) []byte {
	if !strings.HasPrefix(docs, string(documentsKey)) {
		panic("seal: the document list must start with documentsKey")
	}
	d := sha256.Sum256([]byte(docs))
	h := fields + `, "documents_sha256": "` + hex.EncodeToString(d[:]) + `"`
	sum := sha256.Sum256([]byte(h))
	return []byte(string(checksumLine) + hex.EncodeToString(sum[:]) + "\",\n" + h + docs)
}
