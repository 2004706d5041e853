package measure

import (
	"os"
	"path/filepath"
	"testing"
)

// Write and flush requests are read from their own fields; a line from
// a kernel before 5.5 has no flush fields, and says so.
func TestReadDiskStatsRequests(t *testing.T) {
	p := filepath.Join(t.TempDir(), "diskstats")
	os.WriteFile(p, []byte(" 254       0 vda 100 0 2000 5 300 7 4000 9 0 0 0 1 0 8 0 60 3\n 254       1 vdb 1 0 8 0 2 0 16 0 0 0 0\n"), 0o644)
	s, err := readDiskStats(p, "vda")
	if err != nil {
		t.Fatal(err)
	}
	if want := (DiskStats{ReadBytes: 2000 * 512, WrittenBytes: 4000 * 512, Writes: 300, Flushes: 60, CountsFlushes: true}); s != want {
		t.Errorf("got %+v, want %+v", s, want)
	}
	old, err := readDiskStats(p, "vdb")
	if err != nil {
		t.Fatal(err)
	}
	if want := (DiskStats{ReadBytes: 8 * 512, WrittenBytes: 16 * 512, Writes: 2}); old != want {
		t.Errorf("got %+v, want %+v", old, want)
	}
	if d := s.Sub(old); d.CountsFlushes {
		t.Errorf("a change from a sample without flush fields counts flushes: %+v", d)
	}
}
