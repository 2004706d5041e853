// Package history keeps every benchmark run in one SQLite database: the
// raw benchfmt text verbatim, so an export is the original file, and each
// result indexed by benchmark name and unit and by the run's labels (its
// configuration lines and the labels given on the command line).
//
// The driver is modernc.org/sqlite, SQLite translated to Go: no cgo, so
// the history tool builds and runs wherever Go does, with no C toolchain
// and no libsqlite3 to install, and it stays out of the way of the
// engines' own cgo (RocksDB, LMDB). It is slower than the C library,
// which does not matter at a few thousand rows a run (docs/history.md).
//
// Every add is one transaction (a killed add leaves nothing), and the
// database runs in WAL mode with a busy timeout and immediate
// transactions, so two processes adding at once both land: the second
// waits for the first's commit instead of failing.
//
// Load reads the runs back as series for the report: one benchmark and
// unit on one machine, a point per run (its median and benchmath's
// interval), in commit order or, for a release series, semver order.
package history
