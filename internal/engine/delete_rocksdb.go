//go:build rocksdb

package engine

func (r *rocksDB) Delete(key []byte) error {
	if err := r.writable(); err != nil {
		return err
	}
	return r.db.Delete(r.wo, key)
}
