//go:build !lmdb_bmatsuo

// The LMDB binding: github.com/PowerDNS/lmdb-go (the default). Build with
// -tags lmdb_bmatsuo for github.com/bmatsuo/lmdb-go instead; the two cannot
// link into one binary (both carry liblmdb's C symbols). lmdb.go uses only
// the names below, which both bindings provide with the same API.
package engine

import lmdb "github.com/PowerDNS/lmdb-go/lmdb"

const lmdbModule = "github.com/PowerDNS/lmdb-go"

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
