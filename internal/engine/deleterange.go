package engine

import (
	"context"
	"errors"

	bolt "go.etcd.io/bbolt"
)

// BatchDeleter removes many keys in one write: one batch of deletes
// (Badger, Pebble, RocksDB) or one write transaction (bbolt, LMDB),
// durable as Options.Sync says. Keys that are not there are not an
// error. The caller keeps keys unchanged until it returns. Every adapter
// implements it; a workload that deletes in bulk type-asserts a DB to it.
type BatchDeleter interface {
	DeleteBatch(keys [][]byte) error
}

// RangeDeleter removes every key in [start, end) in one write that does
// not visit the keys: a range tombstone (Pebble's DeleteRange,
// RocksDB's DeleteRange), dropped with the keys it covers when a
// compaction reaches the bottom level. Engines without one (Badger, whose
// DropPrefix rewrites every level with writes stopped, and the B-trees)
// do not implement it.
type RangeDeleter interface {
	DeleteRange(start, end []byte) error
}

// Compacter runs the engine's manual compaction over the keys in
// [start, end) and returns when it has finished, so that deleted entries
// there have been dropped wherever the compaction reached them: Pebble's
// Compact and RocksDB's CompactRange compact the range down through
// every level, dropping tombstones at the bottom; Badger's Flatten
// compacts whole levels (it takes no range) until one is left, and does
// not reach what is still in its active memtable, which only Close writes
// out. B-trees free the pages of deleted keys when the delete commits and
// have no compaction: they do not implement it.
type Compacter interface {
	Compact(start, end []byte) error
}

func (b *badgerDB) DeleteBatch(keys [][]byte) error {
	if err := b.writable(); err != nil {
		return err
	}
	wb := b.db.NewWriteBatch()
	defer wb.Cancel()
	for _, k := range keys {
		if err := wb.Delete(k); err != nil {
			return err
		}
	}
	return wb.Flush()
}

// Compact is Flatten with one compactor: Badger's only manual
// compaction. It compacts whole levels, whatever start and end say.
func (b *badgerDB) Compact(start, end []byte) error {
	if err := b.writable(); err != nil {
		return err
	}
	return b.db.Flatten(1)
}

func (p *pebbleDB) DeleteBatch(keys [][]byte) error {
	if err := p.writable(); err != nil {
		return err
	}
	b := p.db.NewBatch()
	for _, k := range keys {
		if err := b.Delete(k, nil); err != nil {
			b.Close()
			return err
		}
	}
	err := b.Commit(p.wo)
	if cerr := b.Close(); err == nil {
		err = cerr
	}
	return err
}

// DeleteRange writes one range tombstone over [start, end).
func (p *pebbleDB) DeleteRange(start, end []byte) error {
	if err := p.writable(); err != nil {
		return err
	}
	return p.db.DeleteRange(start, end, p.wo)
}

// Compact compacts [start, end) down through every level, with
// parallelize on (Pebble splits a manual compaction where it can, as
// CockroachDB asks it to).
func (p *pebbleDB) Compact(start, end []byte) error {
	if err := p.writable(); err != nil {
		return err
	}
	return p.db.Compact(context.Background(), start, end, true)
}

func (d *boltDB) DeleteBatch(keys [][]byte) error {
	return d.db.Update(func(tx *bolt.Tx) error {
		bk := tx.Bucket(boltBucket)
		if bk == nil {
			return errors.New("engine bolt: bucket missing")
		}
		for _, k := range keys {
			if err := bk.Delete(k); err != nil {
				return err
			}
		}
		return nil
	})
}

// DeleteBatch deletes in one write transaction (Env.Update, through
// write as a batch's Commit).
func (d *lmdbDB) DeleteBatch(keys [][]byte) error {
	var n int64
	for _, k := range keys {
		n += int64(len(k))
	}
	return d.write("delete", "update", n, func(txn *lmdbTxn) error {
		for _, k := range keys {
			if err := txn.Del(d.dbi, k, nil); err != nil && !lmdbIsNotFound(err) {
				return err
			}
		}
		return nil
	})
}

func (d *memDB) DeleteBatch(keys [][]byte) error {
	for _, k := range keys {
		if err := d.Delete(k); err != nil {
			return err
		}
	}
	return nil
}
