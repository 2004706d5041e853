//go:build !rocksdb

package engine

// RocksDBLibVersion is the version of the librocksdb the binary runs
// against; without the rocksdb build tag there is none.
func RocksDBLibVersion() string { return "not compiled (build with -tags rocksdb)" }

// Without the tag RocksDB stays declared (rocksdb_info.go), so its
// benchmarks exist and skip with the reason.
var (
	rocksdbVersion func() string
	rocksdbOpen    func(Options) (DB, error)
)
