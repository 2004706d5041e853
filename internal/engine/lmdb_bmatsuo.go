//go:build lmdb_bmatsuo

// The LMDB binding under -tags lmdb_bmatsuo: github.com/bmatsuo/lmdb-go,
// instead of lmdb_powerdns.go's (which says why the two are files apart).
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
