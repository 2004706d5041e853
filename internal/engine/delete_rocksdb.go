//go:build rocksdb

package engine

func (r *rocksDB) Delete(key []byte) error {
	if r.closed.Load() {
		return errRocksDBClosed
	}
	if r.readOnly {
		return errRocksDBReadOnly
	}
	return r.db.Delete(r.wo, key)
}
