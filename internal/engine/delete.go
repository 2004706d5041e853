package engine

import (
	"errors"
	"unsafe"

	badger "github.com/dgraph-io/badger/v4"
	bolt "go.etcd.io/bbolt"
)

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

func (b *badgerDB) Delete(key []byte) error {
	if err := b.writable(); err != nil {
		return err
	}
	return b.db.Update(func(txn *badger.Txn) error { return txn.Delete(key) })
}

func (p *pebbleDB) Delete(key []byte) error {
	if err := p.writable(); err != nil {
		return err
	}
	return p.db.Delete(key, p.wo)
}

func (d *boltDB) Delete(key []byte) error {
	return d.db.Update(func(tx *bolt.Tx) error {
		bk := tx.Bucket(boltBucket)
		if bk == nil {
			return errors.New("engine bolt: bucket missing")
		}
		return bk.Delete(key)
	})
}

func (d *lmdbDB) Delete(key []byte) error {
	return d.write("delete", "update", int64(len(key)), func(txn *lmdbTxn) error {
		if err := txn.Del(d.dbi, key, nil); err != nil && !lmdbIsNotFound(err) {
			return err
		}
		return nil
	})
}

func (d *memDB) Delete(key []byte) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return errMemClosed
	}
	ks := unsafe.String(unsafe.SliceData(key), len(key)) // only looked up
	old, ok := d.cur.m[ks]
	if !ok {
		return nil
	}
	delete(d.own().m, ks)
	d.bytes -= int64(len(key) + len(old))
	return nil
}
