//go:build !rocksdb

package engine

// RocksDBLibVersion is the version of the librocksdb the binary runs
// against; without the rocksdb build tag there is none.
func RocksDBLibVersion() string { return "not compiled (build with -tags rocksdb)" }
