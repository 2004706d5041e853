//go:build rocksdb

package engine

import "github.com/linxGnu/grocksdb"

func (r *rocksDB) DeleteBatch(keys [][]byte) error {
	if err := r.writable(); err != nil {
		return err
	}
	wb := grocksdb.NewWriteBatch()
	defer wb.Destroy()
	for _, k := range keys {
		wb.Delete(k)
	}
	return r.db.Write(r.wo, wb)
}

// DeleteRange writes one range tombstone over [start, end), in a write
// batch (grocksdb offers DB.DeleteRange only per column family).
func (r *rocksDB) DeleteRange(start, end []byte) error {
	if err := r.writable(); err != nil {
		return err
	}
	wb := grocksdb.NewWriteBatch()
	defer wb.Destroy()
	wb.DeleteRange(start, end)
	return r.db.Write(r.wo, wb)
}

// Compact is CompactRange over [start, end] with RocksDB's default
// options: every level that holds keys of the range is compacted into the
// next, down to the bottom level, where tombstones are dropped with the
// keys they cover (the bottom level's own files are rewritten only when
// a compaction filter asks: bottommost_level_compaction
// kIfHaveCompactionFilter). It returns when the compaction is done.
func (r *rocksDB) Compact(start, end []byte) error {
	if err := r.writable(); err != nil {
		return err
	}
	r.db.CompactRange(grocksdb.Range{Start: start, Limit: end})
	return nil
}
