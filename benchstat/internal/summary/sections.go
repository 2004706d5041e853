package summary

import "github.com/kvbench/kvbench/benchstat/internal/results"

// Questions are the sections of the summary, in order: what make bench
// asks of every engine. A block's rows are its units times every value of
// its dimensions the run has; what a block does not name and an engine
// has more than one value of (LMDB's readahead=on|off) never splits a
// row: the variant the run's own setting names is shown, and said.
var Questions = []Section{
	{
		Title: "Writes: populate a fresh database; overwrite every key of it (the steady state; make bench: 4 MiB memtables), batches of the run's -batch",
		Blocks: []Block{
			{Op: "Populate", Where: []string{"!mem"}, Dims: []string{"block", "sync"},
				Units: []string{"keys/s", "write-amp", "space-amp"}},
			{Op: "Overwrite", Label: "overwrite", Where: []string{"!mem"}, Dims: []string{"block", "pass"},
				Units: []string{"keys/s", "write-amp", "space-amp"}},
		},
	},
	{
		Title: "Warm point reads (page cache and engine caches loaded)",
		Blocks: []Block{{Op: "ReadRandom", Where: []string{"cache=warm", "!mem"}, Dims: []string{"block", "dist", "hit", "threads"},
			Defaults: uniformDist, Units: []string{"ops/s", "p99-ns"}}},
	},
	{
		Title: "Point reads in a memory budget, beside the disk's own 4 KiB random reads",
		Blocks: []Block{{Op: "ReadRandom", Where: []string{"mem"}, Dims: []string{"mem", "block", "cache", "dist", "hit", "threads"},
			Defaults: uniformDist, Units: []string{"ops/s", "p99-ns", "read-B/op"}}},
		Reference: &Reference{Column: "Disk", Op: "Disk", Where: []string{"op=randread-4k"}, Match: "threads"},
	},
	{
		Title: "Mixed reads and writes under skew: YCSB workloads, closed loop, every operation timed",
		Blocks: []Block{{Op: "YCSB", Where: []string{"!mem"}, Dims: []string{"workload", "dist", "threads", "block"},
			Units: []string{"ops/s", "read-p99-ns", "update-p99-ns", "stall%"}}},
	},
	{
		Title: "Durable commits: one key a transaction, on disk before the commit returns, from 1 and 8× the CPUs' writers",
		Blocks: []Block{{Op: "Commit", Dims: []string{"writers", "block"},
			Prefer: boltCommitMode, Note: "Bolt: one writer's DB.Update (mode=update), several writers' DB.Batch (mode=batch); both in the report",
			Units: []string{"commits/s", "p99-ns", "dev-flushes/commit"}}},
	},
	{
		Title: "Range scans: seek to a random key, read the next -scan_len",
		Blocks: []Block{
			{Op: "Scan", Where: []string{"cache=warm"}, Dims: []string{"block", "scan_len", "threads"},
				Units: []string{"keys/s", "p50-ns", "p99-ns"}},
			{Op: "Iterate", Label: "full scan", Where: []string{"cache=warm", "values=true"}, Dims: []string{"block"},
				Units: []string{"keys/s"}},
		},
	},
	{
		Title:  "Open: open read-only and serve one verified read",
		Blocks: []Block{{Op: "Open", Dims: []string{"block", "cache"}, Units: []string{"ns/op", "read-B/op"}}},
	},
}

// boltCommitMode is the commit path a service on bbolt takes: Update for
// one writer, Batch, which coalesces concurrent Updates, for several.
func boltCommitMode(row results.Parts) map[string]string {
	if w, _ := row.Get("writers"); w == "1" {
		return map[string]string{"mode": "update"}
	}
	return map[string]string{"mode": "batch"}
}

// uniformDist: a ReadRandom leaf without dist= read uniformly (its name
// predates -dist).
var uniformDist = map[string]string{"dist": "uniform"}

// spanDim is the LSMs' data block size, a dimension the B-trees (pages)
// do not have: an engine without it is shown on each of its rows.
const spanDim = "block"

// Section is one question.
type Section struct {
	Title  string
	Blocks []Block
	// Reference adds a column of a benchmark of no engine beside the
	// engines, on the rows whose Match dimension it has too.
	Reference *Reference
}

// Block is the rows of one operation.
type Block struct {
	Op    string
	Label string // prefix of every row label; none by default
	// Where filters sub-benchmarks: "key=value" must be there, "key"
	// must be there with any value, "!key" must be absent.
	Where []string
	// Dims are the name keys that make rows, outermost first.
	Dims []string
	// Defaults are the values of dimensions a name leaves out.
	Defaults map[string]string
	// Prefer names, for a row, the variant shown of an engine that ran
	// several on it (bbolt's mode=batch|update) where the run's settings
	// do not; Note says which, under the block.
	Prefer func(row results.Parts) map[string]string
	Note   string
	Units  []string
}

// Reference is a column of a benchmark of no engine.
type Reference struct {
	Column, Op string
	Where      []string
	Match      string
}
