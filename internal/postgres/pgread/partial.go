package pgread

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/kbqdev/kbq/internal/postgres/blocks"
	"github.com/kbqdev/kbq/internal/postgres/pgsession"
	"github.com/kbqdev/kbq/query"
)

// PartlyMin is the smallest file fetched in part: below it, the round
// trips searches would take for its blocks cost more than fetching it all
// at once. Tests lower it. A file read whole when first needed
// (query.ReadWhenNeeded: the document table, which a search does not
// read) is left in the database whatever its size: it costs one round
// trip when needed, and its bytes none before the first answer.
var PartlyMin int64 = 1 << 20

// A partial is a file of the cache held in part: a segment, or its
// postings. Fetch fetches its last bytes, from the block where what
// searches read piecemeal ends (a segment's stored fields, the postings'
// lists): the tables every search reads. The blocks before, most of its
// size, are fetched as searches read them, or all at once by
// Remote.Complete. Every block is checked against its hash before it is
// used; the file, once whole, against its own, before it joins the cache
// under its hash.
type partial struct {
	file        // its block hashes among what the database says of it
	tail int64  // where the blocks fetched with the file begin
	path string // the data file, in the cache's files
	f    *os.File
	src  *source

	mu      sync.Mutex
	have    []bool                  // by block
	pending map[int64]chan struct{} // the blocks being fetched, closed once they are
	done    func()                  // ends query.ReadPartly
}

// Need fetches the blocks of bytes [off, end) that the file lacks.
func (p *partial) Need(off, end int64) error {
	end = min(end, p.size)
	if off < 0 || off >= end {
		return nil
	}
	return p.ensure(context.Background(), p.src, off/blocks.Size, (end-1)/blocks.Size+1, 0)
}

// ReadAt reads the file, fetching first the blocks it lacks of those read.
func (p *partial) ReadAt(b []byte, off int64) (int, error) {
	if err := p.Need(off, off+int64(len(b))); err != nil {
		return 0, err
	}
	return p.f.ReadAt(b, off)
}

// ensure fetches from src the blocks in [first, last) that the file
// lacks, a run of missing blocks at a time, each run at most most blocks
// (0: no limit). A block another reader is fetching is waited for, not
// fetched again: the repositories of a union that share a file read the
// same blocks at once.
func (p *partial) ensure(ctx context.Context, src *source, first, last int64, most int64) error {
	for {
		var runs [][2]int64
		var wait []chan struct{}
		p.mu.Lock()
		for b := first; b < last; b++ {
			if p.have[b] {
				continue
			}
			if c, ok := p.pending[b]; ok {
				wait = append(wait, c)
				continue
			}
			if n := len(runs); n > 0 && runs[n-1][1] == b && (most == 0 || b-runs[n-1][0] < most) {
				runs[n-1][1]++
			} else {
				runs = append(runs, [2]int64{b, b + 1})
			}
		}
		fetching := make(chan struct{})
		for _, r := range runs {
			for b := r[0]; b < r[1]; b++ {
				p.pending[b] = fetching
			}
		}
		p.mu.Unlock()
		if len(runs)+len(wait) == 0 {
			return nil
		}
		err := p.fetchRuns(ctx, src, runs, fetching)
		if err != nil {
			return err
		}
		for _, c := range wait {
			select {
			case <-c:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		if len(wait) == 0 {
			return nil
		}
		// The blocks waited for are there, unless their fetch failed:
		// look again, and fetch those.
	}
}

// fetchRuns fetches the runs of blocks from src, and then, fetched or
// not, ends their pending state and closes fetching.
func (p *partial) fetchRuns(ctx context.Context, src *source, runs [][2]int64, fetching chan struct{}) error {
	defer func() {
		p.mu.Lock()
		for _, r := range runs {
			for b := r[0]; b < r[1]; b++ {
				delete(p.pending, b)
			}
		}
		p.mu.Unlock()
		close(fetching)
	}()
	for _, r := range runs {
		if err := p.fetch(ctx, src, r[0], r[1]); err != nil {
			return err
		}
	}
	return nil
}

// fetch fetches blocks [from, to) from src into the file.
func (p *partial) fetch(ctx context.Context, src *source, from, to int64) error {
	off := from * blocks.Size
	data, err := src.read(ctx, p.hash, off, min(to*blocks.Size, p.size)-off)
	if err != nil {
		return err
	}
	return p.put(off, data)
}

// put checks data, whole blocks of the file from off, and writes it into
// the file.
func (p *partial) put(off int64, data []byte) error {
	if err := blocks.Check(p.blocks, p.size, off, data); err != nil {
		return fmt.Errorf("file %.12s: %w", p.hash, err)
	}
	if _, err := p.f.WriteAt(data, off); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for b := off / blocks.Size; b*blocks.Size < off+int64(len(data)); b++ {
		p.have[b] = true
	}
	return nil
}

// complete fetches from src the blocks the file lacks, a piece at a
// time, checks the whole file against its hash and places it in the cache
// under its hash, where the next Fetch finds it.
func (p *partial) complete(ctx context.Context, src *source, blobs string) error {
	if err := p.ensure(ctx, src, 0, int64(len(p.have)), pieceSize/blocks.Size); err != nil {
		return err
	}
	h := sha256.New()
	if _, err := io.Copy(h, io.NewSectionReader(p.f, 0, p.size)); err != nil {
		return err
	}
	if hex.EncodeToString(h.Sum(nil)) != p.hash {
		return fmt.Errorf("file %.12s does not match its hash: the database is damaged", p.hash)
	}
	if err := os.Chmod(p.path, 0o444); err != nil {
		return err
	}
	// Another process may have placed the same file meanwhile: it holds
	// the same bytes.
	if err := os.Link(p.path, filepath.Join(blobs, p.hash)); err != nil && !errors.Is(err, os.ErrExist) {
		return err
	}
	p.done()
	return os.Remove(p.path)
}

// A source reads parts of files from the database over one session, one
// read at a time, and counts the bytes it read.
type source struct {
	mu    sync.Mutex
	conn  *pgx.Conn
	bytes atomic.Int64
}

// readTimeout bounds one read of a part of a file.
const readTimeout = 30 * time.Second

// read reads n bytes of the file hash from off.
func (s *source) read(ctx context.Context, hash string, off, n int64) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, readTimeout)
	defer cancel()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn == nil {
		return nil, errors.New("the database's session is closed")
	}
	var data []byte
	err := s.conn.QueryRow(ctx, `SELECT substring(data FROM $2 FOR $3) FROM kbq_file WHERE hash = $1`, hash, off+1, n).Scan(&data)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("file %.12s is no longer in the database: a publish replaced it; search again", hash)
	}
	if err != nil {
		return nil, fmt.Errorf("read file %.12s: %w", hash, err)
	}
	if int64(len(data)) != n {
		return nil, fmt.Errorf("file %.12s: %d bytes where %d were asked for: the database is damaged (shorter than its size)", hash, len(data), n)
	}
	s.bytes.Add(n)
	return data, nil
}

func (s *source) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn != nil {
		s.conn.Close(context.Background())
		s.conn = nil
	}
}

// A Remote is what FetchPartly left in the database, to be read as
// searches need it: the parts of large files that searches read
// piecemeal. It reads over the session FetchPartly was given, which it
// closes with Close.
type Remote struct {
	src      *source
	partials []*partial
	blobs    string
	dirs     map[string]string // the artifact directories placed with partial files, by filesKey

	completing sync.Mutex
	closed     context.Context // done once Close is called
	close      context.CancelFunc
}

func newRemote(conn *pgx.Conn, blobs string) *Remote {
	r := &Remote{src: &source{conn: conn}, blobs: blobs}
	r.closed, r.close = context.WithCancel(context.Background())
	return r
}

// Bytes is how many bytes have been read from the database since
// FetchPartly returned: by searches, and by Complete.
func (r *Remote) Bytes() int64 { return r.src.bytes.Load() }

// Complete fetches what Fetch left in the database, over sessions of its
// own, and keeps each file, checked whole, in the cache, where the next
// Fetch finds it. Searches may go on meanwhile.
func (r *Remote) Complete(ctx context.Context) error {
	r.completing.Lock()
	defer r.completing.Unlock()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(r.closed, cancel)()
	if r.closed.Err() != nil {
		return errors.New("the database's session is closed")
	}
	var todo []*partial
	for _, p := range r.partials {
		if _, err := os.Stat(p.path); err == nil {
			todo = append(todo, p)
		}
	}
	if len(todo) == 0 {
		return nil
	}
	r.src.mu.Lock()
	cfg := r.src.conn.Config()
	r.src.mu.Unlock()
	conns := pgsession.Open(ctx, cfg, min(len(todo), 1+helpersFor(cfg)), nil)
	if len(conns) == 0 {
		conns = nil // the server takes one session: complete over the searches' own
	}
	defer pgsession.Close(conns)
	errs := make([]error, len(todo))
	var wg sync.WaitGroup
	next := make(chan int, len(todo))
	for i := range todo {
		next <- i
	}
	close(next)
	for w := range max(1, len(conns)) {
		src := r.src
		if conns != nil {
			src = &source{conn: conns[w]}
		}
		wg.Go(func() {
			for i := range next {
				errs[i] = todo[i].complete(ctx, src, r.blobs)
			}
			if src != r.src {
				r.src.bytes.Add(src.bytes.Load())
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Close closes the session searches read over, and removes the partial
// files not completed and the artifact directories Fetch placed for them.
// An index open on them reads on what it fetched, and fails on the rest.
func (r *Remote) Close() error {
	r.close() // a Complete under way stops
	r.completing.Lock()
	defer r.completing.Unlock()
	r.src.close()
	for _, p := range r.partials {
		p.done()
		p.f.Close()
		os.Remove(p.path)
	}
	for _, d := range r.dirs {
		os.RemoveAll(d)
	}
	return nil
}

// newPartial creates the data file of f, of its size and empty, in
// blobs, and has the query package read it through the partial file:
// searches read its first bytes, up to partEnd, piecemeal. Its tail, from
// the block where they end, is for the caller to fetch (fetchPieces)
// before the file is opened.
func newPartial(blobs string, f file, partEnd int64, src *source) (*partial, error) {
	out, err := os.CreateTemp(blobs, "partial-"+f.hash[:16]+"-")
	if err != nil {
		return nil, err
	}
	tail := partEnd / blocks.Size * blocks.Size
	if partEnd >= f.size {
		tail = f.size // read whole when needed: nothing fetched before
	}
	p := &partial{file: f, tail: tail, path: out.Name(), f: out, src: src}
	p.have = make([]bool, (f.size+blocks.Size-1)/blocks.Size)
	p.pending = map[int64]chan struct{}{}
	err = out.Truncate(f.size)
	if err == nil {
		p.done, err = query.ReadPartly(p.path, p)
	}
	if err != nil {
		out.Close()
		os.Remove(out.Name())
		return nil, err
	}
	return p, nil
}

// partOf is the partial file of hash, nil when there is none.
func (r *Remote) partOf(hash string) *partial {
	for _, p := range r.partials {
		if p.hash == hash {
			return p
		}
	}
	return nil
}

// startPartials creates the partial files of missing, the files to
// fetch: the large segments with block hashes, whose footers say where
// their stored fields end. It returns the files left to fetch whole, and
// the Remote that reads the rest of the partial ones over conn; their
// tails are the caller's to fetch.
func startPartials(ctx context.Context, tx pgx.Tx, conn *pgx.Conn, blobs string, missing []file) ([]file, *Remote, error) {
	r := newRemote(conn, blobs)
	var hashes []string
	longest := 0
	for _, f := range missing {
		if n, ok := query.PartlyRead(f.name); ok && (f.size >= PartlyMin || query.ReadWhenNeeded(f.name)) && f.blocks != nil {
			hashes = append(hashes, f.hash)
			longest = max(longest, n)
		}
	}
	if len(hashes) == 0 {
		return missing, r, nil
	}
	footers := map[string][]byte{}
	rows, err := tx.Query(ctx, `SELECT hash, substring(data FROM (size - $2 + 1)::integer) FROM kbq_file WHERE hash = ANY($1)`, hashes, longest)
	if err != nil {
		return nil, nil, err
	}
	for rows.Next() {
		var hash string
		var footer []byte
		if err := rows.Scan(&hash, &footer); err != nil {
			return nil, nil, err
		}
		footers[hash] = footer
	}
	if err := rows.Err(); err != nil {
		return nil, nil, err
	}
	var whole []file
	for _, f := range missing {
		footer, ok := footers[f.hash]
		n, _ := query.PartlyRead(f.name)
		var end int64
		if ok && len(footer) >= n {
			end, err = query.PartEnd(f.name, footer[len(footer)-n:], f.size)
		}
		if !ok || len(footer) < n || err != nil {
			// Not a segment kbq reads in part: fetched whole, and
			// checked so; opening it says what is wrong.
			whole = append(whole, f)
			continue
		}
		p, err := newPartial(blobs, f, end, r.src)
		if err != nil {
			r.Close()
			return nil, nil, err
		}
		r.partials = append(r.partials, p)
	}
	return whole, r, nil
}

// tails are the partial files whose tails are to fetch; none for a nil
// Remote.
func (r *Remote) tails() []*partial {
	if r == nil {
		return nil
	}
	return r.partials
}
