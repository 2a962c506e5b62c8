package artifact

import (
	"os"
	"path/filepath"
	"testing"
)

func TestSnapshotEpoch(t *testing.T) {
	for name, want := range map[string]uint64{
		"00000000000f.snp":  15,
		"000000000000.snp":  0,
		"1000000000000.snp": 1 << 48,
	} {
		if got, ok := snapshotEpoch(name); !ok || got != want {
			t.Errorf("snapshotEpoch(%q) = %d, %v; want %d", name, got, ok, want)
		}
	}
	for _, name := range []string{"00000000000f.seg", "00000000000f.kbt", "0000000000f.snp", "00000000000F.snp",
		"+0000000000f.snp", "00000000000f.snp.tmp", ".snp", "snp"} {
		if got, ok := snapshotEpoch(name); ok {
			t.Errorf("snapshotEpoch(%q) = %d, want none", name, got)
		}
	}
}

// The newest snapshot is read, whatever segment files sit beside it.
func TestReadSnapshotNewest(t *testing.T) {
	dir := t.TempDir()
	for epoch, segs := range map[uint64][]SnapshotSegment{3: {{ID: 1}}, 7: {{ID: 1}, {ID: 5}}} {
		data, err := EncodeSnapshot(segs)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, SnapshotName(epoch)), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{SegmentName(9), "000000000009.kbt"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s, err := ReadSnapshot(dir)
	if err != nil {
		t.Fatal(err)
	}
	if s.Epoch != 7 || len(s.Segments) != 2 || s.Segments[1].ID != 5 {
		t.Errorf("read epoch %d with %+v, want epoch 7 with segments 1 and 5", s.Epoch, s.Segments)
	}
}
