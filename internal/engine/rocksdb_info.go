package engine

import "strings"

const rocksdbModule = "github.com/linxGnu/grocksdb"

// rocksdbReadahead is the explicit readahead_size of readahead=256KiB:
// RocksDB's own ceiling for its implicit readahead, from the first read.
const rocksdbReadahead = 256 << 10

func init() {
	i := Info{
		Name:         "rocksdb",
		Title:        "RocksDB",
		Module:       rocksdbModule,
		Version:      func() string { return rocksdbModule + " (not compiled in)" },
		Compressions: []string{"none", "snappy", "zstd"},
		Layout:       lsmLayout,
		TableFilters: true,
		DataBlocks:   true,
		// Write-ahead logs (NNNNNN.log) and the info log (LOG, LOG.old.*).
		LogFile: func(n string) bool {
			return strings.HasSuffix(n, ".log") || n == "LOG" || strings.HasPrefix(n, "LOG.old")
		},
		Dims: []Dim{
			boundDim,
			// RocksDB's implicit iterator readahead (8 KiB growing to
			// 256 KiB after two sequential reads of a file) against an
			// explicit 256 KiB from the first read.
			{Name: "readahead", Values: []string{"auto", "256KiB"}, For: []string{"Prefetch"},
				Apply: func(v string, _ *Options, it *IterOptions) {
					if v == "256KiB" {
						it.ReadaheadBytes = rocksdbReadahead
					}
				}},
		},
	}
	if rocksdbOpen == nil {
		i.Missing = "RocksDB needs -tags rocksdb and Debian's librocksdb-dev (make deps installs it)"
	} else {
		i.Open, i.Version = rocksdbOpen, rocksdbVersion
		i.Library = func() string { return "librocksdb " + RocksDBLibVersion() }
	}
	Register(i)
}
