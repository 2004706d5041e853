package audit

// A group is a set of make bench's rows one process runs, with the flags
// make bench gives them (the LSMs at its first block size).
type group struct {
	name  string
	bench string // -test.bench pattern; %s is the engine's title
	args  []string
}

// groups are make bench's rows (benchstat/kvb/benchrows.go), at 1 thread and the
// CPU count; the memory-budget row is left out (it needs a cgroup).
func groups(threads string) map[string]group {
	return map[string]group{
		"reads": {"reads", "^Benchmark(ReadRandom|Scan)%s$", []string{
			"-cache", "warm", "-threads", threads, "-block_size", "4KiB", "-test.benchtime", "0.3s"}},
		"ycsb": {"ycsb", "^BenchmarkYCSB%s$", []string{
			"-ycsb", "A,C", "-dist", "zipf", "-threads", threads, "-block_size", "4KiB", "-test.benchtime", "20000x"}},
		"populate": {"populate", "^BenchmarkPopulate%s$/valsz/batch/sync=false", []string{
			"-test.benchtime", "1x"}},
		"overwrite": {"overwrite", "^BenchmarkOverwrite%s$", []string{
			"-overwrite_passes", "2", "-memtable_mb", "4", "-test.benchtime", "1x"}},
		"open": {"open", "^BenchmarkOpen%s$", []string{
			"-cache", "cold", "-test.benchtime", "10x"}},
		// Not a make bench row: the commits of -sync, for the options
		// that act only there.
		"populate-sync": {"populate-sync", "^BenchmarkPopulate%s$/valsz/batch/sync=true", []string{
			"-test.benchtime", "1x"}},
	}
}

// A setting is one engine option flipped from the suite's default.
type setting struct {
	engine string   // title, as in benchmark names: Badger, Pebble, ...
	name   string   // what is flipped, for the table
	flip   []string // the flags that flip it
	groups []string // the rows it can plausibly move
}

var reads = []string{"reads", "ycsb"}
var writes = []string{"populate", "overwrite", "ycsb"}
var all = []string{"reads", "ycsb", "populate", "overwrite"}

// settings: every engine option that plausibly changes a make bench row.
// A shared flag flipped here changes only the named engine's process.
var settings = []setting{
	{engine: "Badger", name: "iterator value prefetch", flip: []string{"-scan_prefetch"}, groups: []string{"reads"}},
	{engine: "Badger", name: "checksums on read off", flip: []string{"-verify_checksums=false"}, groups: reads},
	{engine: "Badger", name: "block cache 256 MiB", flip: []string{"-cache_mb", "256"}, groups: reads},
	{engine: "Badger", name: "compactors 2", flip: []string{"-badger_compactors", "2"}, groups: writes},
	{engine: "Badger", name: "value log at 512 B", flip: []string{"-badger_vthreshold", "512"}, groups: all},

	{engine: "Pebble", name: "block cache 256 MiB", flip: []string{"-cache_mb", "256"}, groups: reads},
	{engine: "Pebble", name: "Bloom filters off", flip: []string{"-bloom_bits", "0"}, groups: reads},
	{engine: "Pebble", name: "compactions 4", flip: []string{"-pebble_compactions", "4"}, groups: writes},
	{engine: "Pebble", name: "read sampling off", flip: []string{"-pebble_read_sampling=false"}, groups: reads},

	{engine: "RocksDB", name: "block cache 256 MiB", flip: []string{"-cache_mb", "256"}, groups: reads},
	{engine: "RocksDB", name: "Bloom filters off", flip: []string{"-bloom_bits", "0"}, groups: reads},
	{engine: "RocksDB", name: "checksums on read off", flip: []string{"-verify_checksums=false"}, groups: reads},
	{engine: "RocksDB", name: "cache_index_and_filter_blocks", flip: []string{"-rocksdb_cache_index"}, groups: reads},
	{engine: "RocksDB", name: "cache_index + pin_l0", flip: []string{"-rocksdb_cache_index", "-rocksdb_pin_l0"}, groups: reads},

	{engine: "Bolt", name: "array freelist", flip: []string{"-bolt_freelist", "array"}, groups: writes},
	{engine: "Bolt", name: "freelist sync", flip: []string{"-bolt_freelist_sync"}, groups: writes},
	{engine: "Bolt", name: "mmap MAP_POPULATE", flip: []string{"-bolt_mmap_populate"}, groups: []string{"reads", "open"}},
	{engine: "Bolt", name: "reused cursor", flip: []string{"-bolt_get", "cursor"}, groups: reads},

	{engine: "Lmdb", name: "OS readahead", flip: []string{"-readahead", "os"}, groups: []string{"reads", "ycsb", "open"}},
	{engine: "Lmdb", name: "MDB_WRITEMAP", flip: []string{"-lmdb_writemap"}, groups: all},
	// Without -sync, MDB_NOSYNC already skips the meta page's sync.
	{engine: "Lmdb", name: "MDB_NOMETASYNC", flip: []string{"-lmdb_nometasync"}, groups: []string{"populate-sync"}},
}
