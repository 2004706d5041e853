//go:build rocksdb

package engine

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestRocksDBBlockSize: Options.BlockSize is the block_size RocksDB
// records in its OPTIONS file and the size of the data blocks it writes
// (its aggregated table properties: data bytes per data block), with one
// binary-searched index block per table.
func TestRocksDBBlockSize(t *testing.T) {
	num := func(props, name string) float64 {
		m := regexp.MustCompile(regexp.QuoteMeta(name) + `=(\d+)`).FindStringSubmatch(props)
		if m == nil {
			t.Fatalf("no %q in %s", name, props)
		}
		n, _ := strconv.ParseFloat(m[1], 64)
		return n
	}
	for _, bs := range []int{8 << 10, 64 << 10} {
		db := blockStore(t, "rocksdb", func(o *Options) { o.BlockSize = bs })
		r := db.(*rocksDB)
		props := r.db.GetProperty("rocksdb.aggregated-table-properties")
		if mean := num(props, "data block size") / num(props, "# data blocks"); mean < 0.75*float64(bs) || mean > 1.1*float64(bs) {
			t.Errorf("block %d: mean data block %.0f bytes: %s", bs, mean, props)
		}
		if strings.Contains(props, "index partitions") {
			t.Errorf("block %d: partitioned index: %s", bs, props)
		}
		files, _ := filepath.Glob(filepath.Join(r.dir, "OPTIONS-*"))
		if len(files) == 0 {
			t.Fatal("no OPTIONS file")
		}
		b, err := os.ReadFile(files[len(files)-1])
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"block_size=" + strconv.Itoa(bs) + "\n", "index_type=kBinarySearch\n"} {
			if !strings.Contains(string(b), want) {
				t.Errorf("block %d: OPTIONS file lacks %q", bs, want)
			}
		}
	}
}

// TestRocksDBVerifyChecksums: every reader's and iterator's ReadOptions
// carry verify_checksums as Options.SkipChecksums says.
func TestRocksDBVerifyChecksums(t *testing.T) {
	for _, skip := range []bool{false, true} {
		db := blockStore(t, "rocksdb", func(o *Options) { o.SkipChecksums = skip })
		rd, err := db.NewReader()
		if err != nil {
			t.Fatal(err)
		}
		it, err := rd.NewIter(IterOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got, it := rd.(*rocksReader).db.ro.VerifyChecksums(), it.(*rocksIter).ro.VerifyChecksums(); got != !skip || it != !skip {
			t.Errorf("SkipChecksums %v: reader verify_checksums %v, iterator %v", skip, got, it)
		}
		it.Close()
		rd.Close()
	}
}
