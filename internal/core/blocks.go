package core

import (
	"fmt"
	"strings"

	"github.com/kvbench/kvbench/internal/engine"
	"github.com/kvbench/kvbench/internal/memlimit"
)

// The LSMs' data block is a dimension of their results (block=4KiB), a
// fixture per size: docs/engines.md, "Data block size". The bounds keep a
// block between a fraction of a page and half Badger's smallest table.
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
		n, err := memlimit.ParseSize(strings.TrimSpace(f))
		return ByteSize(n), err
	})
}

// blocks lists the block sizes info runs at: -block_size's, or 0 for an
// engine without data blocks.
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

// BlockLeaf is name with the block size of o appended (name/block=4KiB)
// for an engine with data blocks: last, so a -bench pattern over the other
// levels selects B-trees and LSMs alike.
func BlockLeaf(name string, info engine.Info, o engine.Options) string {
	if !info.DataBlocks {
		return name
	}
	if o.BlockSize <= 0 {
		panic(fmt.Sprintf("core: %s leaf %q has no block size", info.Name, name))
	}
	return name + "/block=" + memlimit.FormatSize(int64(o.BlockSize))
}
