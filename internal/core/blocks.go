package core

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/engine"
	"github.com/kvbench/kvbench/internal/memlimit"
)

// The LSMs' data block is a dimension of every result of theirs
// (block=4KiB), one fixture per size: docs/engines.md, "Data block size",
// says why and how DefaultBlockSize is chosen. The bounds keep a block
// between a fraction of a page and half of Badger's smallest table.
const (
	DefaultBlockSize ByteSize = 16 << 10
	minBlockSize     ByteSize = 1 << 10
	maxBlockSize     ByteSize = 1 << 20
)

// SizeList is a comma-separated list of sizes (4KiB,32KiB).
type SizeList []ByteSize

func (l *SizeList) String() string {
	if l == nil {
		return ""
	}
	return joinList(*l, ",", func(v ByteSize) string { return v.String() })
}

func (l *SizeList) Set(v string) error {
	return setList((*[]ByteSize)(l), v, func(f string) (ByteSize, error) {
		var n ByteSize
		err := n.Set(strings.TrimSpace(f))
		return n, err
	})
}

// blocks lists the block sizes info runs at: each of -block_size for an
// engine with data blocks, one pass with none (0) for any other.
func (e *Env) blocks(info engine.Info) []ByteSize {
	if !info.DataBlocks {
		return []ByteSize{0}
	}
	return e.Cfg.BlockSizes
}

// Options is the configuration's options for info (Config.Options) at the
// block size of the pass running.
func (e *Env) Options(info engine.Info, dir string, logicalBytes int64) engine.Options {
	o := e.Cfg.Options(info, dir, logicalBytes)
	if e.block > 0 && info.DataBlocks {
		o.BlockSize = int(e.block)
	}
	return o
}

// BlockLeaf is name with the block size an engine's leaf read or wrote
// appended (name/block=4KiB), last so that every other level of the name
// is the same for every engine: a -bench pattern over the others selects
// B-trees and LSMs alike. Engines without data blocks keep name as it is.
func BlockLeaf(name string, info engine.Info, o engine.Options) string {
	if !info.DataBlocks {
		return name
	}
	if o.BlockSize <= 0 {
		panic(fmt.Sprintf("core: %s leaf %q has no block size", info.Name, name))
	}
	return name + "/block=" + memlimit.FormatSize(int64(o.BlockSize))
}

// closeHandlesFrom closes every handle opened since e.handles had n
// (Handle.Close is idempotent: their cleanup on b closes nothing more),
// so that two block sizes never hold memory (caches, maps) at once.
func (e *Env) closeHandlesFrom(tb testing.TB, n int) {
	for _, h := range e.handles[n:] {
		h.Close(tb)
	}
	e.handles = e.handles[:n]
}
