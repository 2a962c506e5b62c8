package query_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/kbqdev/kbq/artifact"
	"github.com/kbqdev/kbq/internal/testkb"
	"github.com/kbqdev/kbq/query"
	"github.com/kbqdev/kbq/query/documents"
)

// raceFiles is the knowledge of build i: one document changes every time,
// so that every build publishes a new index.
func raceFiles(i int) testkb.Files {
	files := testkb.Files{}
	for j := range 20 {
		files[fmt.Sprintf(".kb/t%02d.md", j)] = fmt.Sprintf("# Topic %d\n\nThe deploy pipeline note %d.\n", j, j)
	}
	files[".kb/changing.md"] = fmt.Sprintf("# Changing\n\nThe deploy revision %d.\n", i)
	return files
}

// A reader racing builds that publish back to back, as under kbc watch,
// never reports the intact artifact as corrupt: opening retries from the
// manifest, and a replaced index stays, with its manifest, for readers
// that opened it.
func TestReadersRacingBuildsSeeNoCorruption(t *testing.T) {
	dir := t.TempDir()
	testkb.BuildInto(t, dir, raceFiles(0), nil)
	const builds = 300
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(done)
		for i := 1; i <= builds; i++ {
			testkb.BuildInto(t, dir, raceFiles(i), nil)
		}
	}()
	reads, replaced := 0, 0
	read := func() error {
		ix, err := query.Open(dir)
		if err != nil {
			return err
		}
		defer ix.Close()
		if _, err := ix.Search(context.Background(), query.Request{Query: "deploy revision"}); err != nil {
			return err
		}
		if _, err := ix.Documents(); err != nil {
			return err
		}
		_, err = documents.Get(context.Background(), ix, "changing", "")
		return err
	}
	for running := true; running; {
		select {
		case <-done:
			running = false
		default:
		}
		err := read()
		reads++
		switch {
		case errors.Is(err, query.ErrReplaced):
			replaced++
		case err != nil:
			t.Fatalf("read %d, racing the builds: %v", reads, err)
		}
	}
	wg.Wait()
	t.Logf("%d reads across %d builds; %d told to run again", reads, builds, replaced)
	if reads < 50 {
		t.Errorf("only %d reads raced the builds", reads)
	}
}

// An index opened before two builds replaced it still reads its own
// documents: the manifest that named it is kept beside it.
func TestReplacedIndexKeepsItsManifest(t *testing.T) {
	dir := t.TempDir()
	testkb.BuildInto(t, dir, raceFiles(0), nil)
	ix, err := query.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	testkb.BuildInto(t, dir, raceFiles(1), nil)
	testkb.BuildInto(t, dir, raceFiles(2), nil)
	if m, err := artifact.ReadHeader(dir); err != nil || m.Index == ix.Manifest.Index {
		t.Fatalf("the builds did not replace the index: %v", err)
	}
	doc, err := documents.Get(context.Background(), ix, "changing", "")
	if err != nil {
		t.Fatal(err)
	}
	if want := "The deploy revision 0."; !strings.Contains(doc.Content, want) {
		t.Errorf("the replaced index read %q, want its own %q", doc.Content, want)
	}
}
