//go:build lmdb_bmatsuo

// The LMDB binding under -tags lmdb_bmatsuo: github.com/bmatsuo/lmdb-go. The
// default is github.com/PowerDNS/lmdb-go (lmdb_powerdns.go); the two cannot
// link into one binary (both carry liblmdb's C symbols). lmdb.go uses only
// the names below, which both bindings provide with the same API.
package engine

import lmdb "github.com/bmatsuo/lmdb-go/lmdb"

const lmdbModule = "github.com/bmatsuo/lmdb-go"

type lmdbEnv = lmdb.Env
type lmdbTxn = lmdb.Txn
type lmdbCursor = lmdb.Cursor
type lmdbDBI = lmdb.DBI

const (
	lmdbReadonly    = lmdb.Readonly
	lmdbNoSync      = lmdb.NoSync
	lmdbNoMetaSync  = lmdb.NoMetaSync
	lmdbWriteMap    = lmdb.WriteMap
	lmdbNoReadahead = lmdb.NoReadahead
	lmdbFirst       = lmdb.First
	lmdbNext        = lmdb.Next
	lmdbSetRange    = lmdb.SetRange
)

var lmdbNewEnv, lmdbIsNotFound, lmdbIsMapFull, lmdbVersionString = lmdb.NewEnv, lmdb.IsNotFound, lmdb.IsMapFull, lmdb.VersionString
