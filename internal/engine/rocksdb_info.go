package engine

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
		WriteReserve: rocksdbReserve,
		Params: []Param{
			&Flag[Switch]{Name: "rocksdb_cache_index", Default: "false", Choices: onOff,
				Usage: "RocksDB's cache_index_and_filter_blocks: index and filter blocks go through the block cache (and compete with data blocks) instead of living outside it, RocksDB's default"},
			&Flag[Switch]{Name: "rocksdb_pin_l0", Default: "false", Choices: onOff,
				Usage: "RocksDB's pin_l0_filter_and_index_blocks_in_cache: level-0 index and filter blocks stay pinned in the block cache (only with -rocksdb_cache_index)"},
		},
		LogFile: levelDBLogFile,
		Dims: []Dim{
			boundDim,
			// RocksDB's implicit iterator readahead (8 KiB growing to
			// 256 KiB after two sequential reads of a file) against an
			// explicit 256 KiB from the first read.
			{Name: "readahead", Values: []string{"auto", "256KiB"}, Is: IteratorReadahead,
				Apply: func(v string, _ *Options, it *IterOptions) {
					it.ReadaheadBytes = either(v == "256KiB", rocksdbReadahead, it.ReadaheadBytes)
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

// rocksdbReserve: max_write_buffer_number memtables, each a level-0 table
// once flushed, and the next one's log, which RocksDB preallocates at
// 1.1 write buffers (counted as two); a level-0 compaction
// (level0_file_num_compaction_trigger tables into the base level). Each
// starts at RocksDB's default (the adapter sets it only when Options asks):
// write_buffer_size, max_write_buffer_number,
// level0_file_num_compaction_trigger, max_bytes_for_level_base.
func rocksdbReserve(o Options) int64 {
	mem, n, l0, base := int64(64<<20), int64(2), int64(4), int64(256<<20)
	setPositive(&mem, int64(o.MemtableMB)<<20)
	setPositive(&n, int64(o.MemtablesInFlight))
	setPositive(&l0, int64(o.L0CompactionTables))
	setPositive(&base, o.BaseLevelBytes)
	return lsmReserve(o, mem, n+2, l0, base)
}
