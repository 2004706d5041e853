package engine

import "errors"

// Deleter removes a key in a write of its own, durable as Options.Sync
// says. Removing a key that is not there is not an error. Every adapter
// implements it; services that need deletes type-assert a DB to it.
type Deleter interface {
	Delete(key []byte) error
}

// Delete removes key from db.
func Delete(db DB, key []byte) error {
	d, ok := db.(Deleter)
	if !ok {
		return errors.New("engine " + db.Name() + ": Delete is not supported")
	}
	return d.Delete(key)
}

// BatchDeleter removes many keys in one write (one batch of deletes, or
// one write transaction in a B-tree), durable as Options.Sync says. Keys
// that are not there are not an error. The caller keeps keys unchanged
// until it returns. Every adapter implements it; a workload that deletes
// in bulk type-asserts a DB to it.
type BatchDeleter interface {
	DeleteBatch(keys [][]byte) error
}

// RangeDeleter removes every key in [start, end) in one write that does
// not visit the keys: a range tombstone, dropped with the keys it covers
// when a compaction reaches the bottom level (Pebble, RocksDB). Badger's
// DropPrefix, which rewrites every level with writes stopped, is not one.
type RangeDeleter interface {
	DeleteRange(start, end []byte) error
}

// Compacter runs the engine's manual compaction over [start, end) and
// returns when it has dropped the deleted entries wherever it reached (each
// adapter's Compact says how far). B-trees free pages as deletes commit.
type Compacter interface {
	Compact(start, end []byte) error
}
