package pgread

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
	"golang.org/x/sync/errgroup"

	"github.com/kbqdev/kbq/internal/postgres/pgsession"
	"github.com/kbqdev/kbq/internal/safefs"
)

// pieceSize is the most of a file one query reads. A file of several
// pieces is read by several sessions at once, and kbc stores files
// uncompressed, so a piece is read without decompressing what precedes it.
var pieceSize int64 = 1 << 20

// fetchHelpers is how many sessions, besides the caller's, read files
// when there is more than a piece to read: side by side, they hide each
// other's round trips to a server on another machine.
const fetchHelpers = 3

// helpersFor is how many helper sessions read files from the server of
// cfg. A server on this machine (a loopback address or a Unix socket)
// runs its sessions on the processors that take in what they send, and
// a session more than those processors run at once gains nothing and
// costs its start, a process the server forks: on the 2-core machine,
// the first answer of kbq serve --db over 21 repositories with an empty
// cache took 44 ms (median of eight) with three helpers, 41.5 with two
// and 40 with one.
func helpersFor(cfg *pgx.ConnConfig) int {
	if localServer(cfg.Host) {
		return max(1, min(fetchHelpers, runtime.GOMAXPROCS(0)-1))
	}
	return fetchHelpers
}

// localServer reports whether host, a server's host as pgx keeps it,
// is on this machine: a Unix socket's directory, localhost or a
// loopback address.
func localServer(host string) bool {
	if strings.HasPrefix(host, "/") || host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// helpers are the sessions that read files beside the caller's, opened in
// the background (startHelpers) while the caller's goes on.
type helpers struct {
	ready chan struct{}
	conns []*pgx.Conn
	done  func()
}

// startHelpers starts opening helper sessions in tx's snapshot when files
// are more than a piece's worth, taking those early dialed, when it is
// not nil, and dropping them when there are not.
func startHelpers(ctx context.Context, tx pgx.Tx, files []file, early *dialed) *helpers {
	h := &helpers{ready: make(chan struct{}), done: func() {}}
	var total int64
	for _, f := range files {
		total += f.size
	}
	id, ok := "", false
	if total > pieceSize {
		id, ok = exportSnapshot(ctx, tx)
	}
	if !ok {
		early.drop()
		close(h.ready)
		return h
	}
	cfg := tx.Conn().Config()
	go func() {
		defer close(h.ready)
		if conns := early.take(); conns != nil {
			h.conns, h.done = joinSnapshot(ctx, conns, id)
			return
		}
		h.conns, h.done = snapshotReaders(ctx, cfg, id)
	}()
	return h
}

// dialed are helper sessions opened before it is known whether they will
// be needed: a fetch into an empty cache opens them while its own session
// reads the repositories' file lists, rather than after (a session's start,
// the server forking a process for it, is about 3 ms).
type dialed struct {
	done  chan struct{}
	conns []*pgx.Conn
	once  sync.Once // taken or dropped
}

// dial starts opening helpersFor(cfg) sessions like cfg's.
func dial(ctx context.Context, cfg *pgx.ConnConfig) *dialed {
	d := &dialed{done: make(chan struct{})}
	go func() {
		defer close(d.done)
		d.conns = pgsession.Open(ctx, cfg, helpersFor(cfg), nil)
	}()
	return d
}

// take waits for the sessions and returns them, now the caller's to
// close; nil when d is nil or was taken or dropped already.
func (d *dialed) take() (conns []*pgx.Conn) {
	if d == nil {
		return nil
	}
	d.once.Do(func() {
		<-d.done
		conns = d.conns
	})
	return conns
}

// drop closes the sessions, once they are open, unless they were taken.
func (d *dialed) drop() {
	if d == nil {
		return
	}
	d.once.Do(func() {
		go func() {
			<-d.done
			pgsession.Close(d.conns)
		}()
	})
}

// joinSnapshot readies conns to read the exported snapshot id, each in a
// read-only transaction, and returns those that could; done closes them.
func joinSnapshot(ctx context.Context, conns []*pgx.Conn, id string) (readers []*pgx.Conn, done func()) {
	for _, c := range conns {
		if err := readSnapshot(ctx, c, id); err != nil {
			c.Close(context.Background())
			continue
		}
		readers = append(readers, c)
	}
	return readers, func() { pgsession.Close(readers) }
}

// readSnapshot begins a read-only transaction on c that sees the exported
// snapshot id.
func readSnapshot(ctx context.Context, c *pgx.Conn, id string) error {
	if _, err := c.Exec(ctx, `BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY`); err != nil {
		return err
	}
	// The id is the server's, checked by exportSnapshot; SET takes no
	// parameters.
	_, err := c.Exec(ctx, `SET TRANSACTION SNAPSHOT '`+id+`'`)
	return err
}

// get waits for the helper sessions and returns them.
func (h *helpers) get() []*pgx.Conn {
	<-h.ready
	return h.conns
}

// close closes the helper sessions, once they are open, in the
// background: their work is done.
func (h *helpers) close() {
	go func() {
		<-h.ready
		h.done()
	}()
}

// fetchPieces reads files whole, and of the partial files the bytes from
// their tails' starts, a piece at a time, over tx and the helper sessions
// h side by side. Each whole file is written into blobs under its hash
// once it matches the hash; each piece of a partial file into it, once
// its blocks match theirs.
func fetchPieces(ctx context.Context, tx pgx.Tx, h *helpers, blobs string, files []file, partials []*partial) (sessions int, err error) {
	type piece struct {
		file   int      // of files, when part is nil
		part   *partial // else
		off, n int64
	}
	var pieces []piece
	var total int64
	left := make([]atomic.Int64, len(files))
	for i, f := range files {
		total += f.size
		for off := int64(0); off < f.size; off += pieceSize {
			pieces = append(pieces, piece{file: i, off: off, n: min(pieceSize, f.size-off)})
			left[i].Add(1)
		}
	}
	for _, p := range partials {
		total += p.size - p.tail
		for off := p.tail; off < p.size; off += pieceSize {
			pieces = append(pieces, piece{part: p, off: off, n: min(pieceSize, p.size-off)})
		}
	}
	if len(files)+len(pieces) == 0 {
		return 0, nil
	}
	g, ctx := errgroup.WithContext(ctx)
	for _, f := range files {
		if f.size == 0 { // no piece to wait for
			g.Go(func() error { return store(blobs, f, nil) })
		}
	}
	// A file's buffer is made when its first piece is read and dropped
	// once it is stored; pieces are read in file order, so only a few
	// files are held at a time.
	bufs := make([][]byte, len(files))
	made := make([]sync.Once, len(files))
	work := make(chan piece, len(pieces))
	for _, p := range pieces {
		work <- p
	}
	close(work)
	type reader interface {
		QueryRow(context.Context, string, ...any) pgx.Row
	}
	sessions = 1
	read := func(r reader) error {
		for p := range work {
			if p.part != nil {
				dst := pieceOf(make([]byte, p.n))
				err := r.QueryRow(ctx, `SELECT substring(data FROM $2 FOR $3) FROM kbq_file WHERE hash = $1`, p.part.hash, p.off+1, p.n).Scan(&dst)
				if err == nil {
					err = p.part.put(p.off, dst)
				}
				if err != nil {
					return fmt.Errorf("read file %.12s: %w", p.part.hash, err)
				}
				continue
			}
			f := files[p.file]
			made[p.file].Do(func() { bufs[p.file] = make([]byte, f.size) })
			// The piece goes from the connection's buffer to the
			// file's, with no copy in between.
			dst := pieceOf(bufs[p.file][p.off : p.off+p.n])
			err := r.QueryRow(ctx, `SELECT substring(data FROM $2 FOR $3) FROM kbq_file WHERE hash = $1`, f.hash, p.off+1, p.n).Scan(&dst)
			if err != nil {
				return fmt.Errorf("read file %.12s: %w", f.hash, err)
			}
			if left[p.file].Add(-1) == 0 {
				if err := store(blobs, f, bufs[p.file]); err != nil {
					return err
				}
				bufs[p.file] = nil
			}
		}
		return nil
	}
	// The caller's session starts at once; the helpers join as they
	// are ready.
	g.Go(func() error { return read(tx) })
	if total > pieceSize {
		helpers := h.get()
		sessions += len(helpers)
		for _, c := range helpers {
			g.Go(func() error { return read(c) })
		}
	}
	return sessions, g.Wait()
}

// pieceOf is where a piece of a file is read into; it takes exactly its
// length.
type pieceOf []byte

func (p *pieceOf) ScanBytes(v []byte) error {
	if len(v) != len(*p) {
		return fmt.Errorf("%d bytes where %d were asked for: the database is damaged (shorter than its size)", len(v), len(*p))
	}
	copy(*p, v)
	return nil
}

// store writes data, file's content, under its hash in blobs once it
// matches the hash.
func store(blobs string, f file, data []byte) error {
	if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != f.hash {
		return fmt.Errorf("file %.12s does not match its hash: the database is damaged", f.hash)
	}
	return safefs.Replace(filepath.Join(blobs, f.hash), data, 0o444)
}

// snapshotID reports whether id has the form of what pg_export_snapshot
// returns: hexadecimal digits and dashes.
func snapshotID(id string) bool {
	for i := range len(id) {
		if c := id[i]; !isHex(c) && c != '-' {
			return false
		}
	}
	return id != ""
}

// isHex reports whether c is a hexadecimal digit, in either case.
func isHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

// exportSnapshot exports tx's snapshot for other sessions to take, and
// says whether it could: not where the server takes one session, as
// PGlite's (which speaks only the simple protocol).
func exportSnapshot(ctx context.Context, tx pgx.Tx) (string, bool) {
	if tx.Conn().Config().DefaultQueryExecMode == pgx.QueryExecModeSimpleProtocol {
		return "", false
	}
	var id string
	if err := tx.QueryRow(ctx, `SELECT pg_export_snapshot()`).Scan(&id); err != nil || !snapshotID(id) {
		return "", false
	}
	return id, true
}

// snapshotReaders opens up to helpersFor(cfg) sessions like cfg's, as
// many as the server grants, each in a read-only transaction that sees
// the exported snapshot id. done closes them.
func snapshotReaders(ctx context.Context, cfg *pgx.ConnConfig, id string) (readers []*pgx.Conn, done func()) {
	readers = pgsession.Open(ctx, cfg, helpersFor(cfg), func(ctx context.Context, c *pgx.Conn) error {
		return readSnapshot(ctx, c, id)
	})
	return readers, func() { pgsession.Close(readers) }
}
