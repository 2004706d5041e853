package embedded

import (
	"fmt"
	"io/fs"
	"sync"

	"github.com/kvbench/kvbench/internal/core"
)

// flags are the Embed workloads' own, which all four list: how much of the
// embedded cdb they use (it names the engines' fixtures of the records),
// and its pages' readahead. Their lines name the cdb the binary embeds.
var flags = []core.Option{recordsFlag, readaheadFlag}

var (
	recordsFlag = &core.Flag[uint64]{Name: "embed_records", Shapes: true,
		Usage: "records of the embedded cdb the Embed benchmarks use (0: all of them)",
		Check: func(n uint64, c *core.Config) error {
			d, err := cdbOf(c)
			if d == nil || err != nil {
				return nil // nothing to check against, or readaheadFlag's error
			}
			if n > d.Records {
				return fmt.Errorf("the embedded %s holds %d records; use at most that, or 0 for all (make embed-data RECORDS=%d embeds more)", d.Name, d.Records, n)
			}
			return nil
		},
		Echo: func(n uint64, e *core.Env, line func(string, any)) {
			d, _ := cdbOf(&e.Cfg)
			if d == nil {
				line("embed-cdb", "none (no embedded file system)")
				return
			}
			n = used(n, d)
			line("embed-cdb", fmt.Sprintf("%s (%d records, %d bytes)", d.Name, d.Records, d.Size))
			line("embed-records", n)
			line("embed-cold-ops", coldOps(e, n)) // records a cold EmbedGet round reads
		}}
	// The pages are advised when the cdb is first opened for a run (cdbOf):
	// a check before any work.
	readaheadFlag = &core.Flag[bool]{Name: "embed_readahead", Default: true,
		Usage: "leave OS readahead on for the embedded cdb's pages of the executable (false: madvise MADV_RANDOM, as -readahead off has LMDB do to its map)",
		Check: func(on bool, _ *core.Config) error {
			_, err := opened(on)
			return err
		},
		Echo: func(on bool, _ *core.Env, line func(string, any)) {
			if d, _ := opened(on); d != nil {
				line("embed-readahead", on)
				line("engine-cdb", cdbVersion())
			}
		}}
)

// used is how many records the workloads use: -embed_records, or all.
func used(n uint64, d *CDB) uint64 {
	if n > 0 {
		return n
	}
	return d.Records
}

// binary is the cdb this binary embeds: the file system the root package
// hands over (SetFS), and the cdb opened from it for each
// -embed_readahead (Open advises the pages once).
var binary struct {
	mu   sync.Mutex
	fsys fs.FS
	cdbs map[bool]openedCDB
}

type openedCDB struct {
	d   *CDB
	err error
}

// SetFS makes fsys, a //go:embed file system holding Committed or
// Generated, the cdb the Embed benchmarks read. Without it they fail
// with the reason, and nothing else changes.
func SetFS(fsys fs.FS) {
	binary.mu.Lock()
	defer binary.mu.Unlock()
	binary.fsys, binary.cdbs = fsys, nil
}

// opened is the binary's cdb with readahead on or off; nil without SetFS.
func opened(readahead bool) (*CDB, error) {
	binary.mu.Lock()
	defer binary.mu.Unlock()
	if binary.fsys == nil {
		return nil, nil
	}
	o, ok := binary.cdbs[readahead]
	if !ok {
		o.d, o.err = Open(binary.fsys, readahead)
		if binary.cdbs == nil {
			binary.cdbs = map[bool]openedCDB{}
		}
		binary.cdbs[readahead] = o
	}
	return o.d, o.err
}

// cdbOf is the cdb a run reads (nil without SetFS).
func cdbOf(c *core.Config) (*CDB, error) { return opened(readaheadFlag.Get(c)) }
