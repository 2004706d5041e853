package core

import "github.com/kvbench/kvbench/internal/dataset"

// What a workload sees of the run: the *Env itself, one concrete type.
// Its values are RunData's; its methods declare and open fixtures
// (fixture.go, handle.go), write databases of a body's own (write.go,
// scratch.go), print settings and log (output.go), and give each call of
// a benchmark its random streams (calls.go).

// RunData is the run's values: the validated configuration, the data set
// and the suite's directory under -dir.
type RunData struct {
	Cfg       Config
	Keys      uint64
	Gen       *dataset.Gen
	FullCheck bool
	Root      dataset.Root // zero until Setup opens -dir
	Dir       string       // -dir as given or defaulted, absolute
}

// Shape is the first part of the sub-benchmark names of every workload
// on the run's data set: the value size and, under -mem_limit, the
// budget ("valsz=1024/mem=26MiB"), so results in and out of a budget
// never share a name.
func (d *RunData) Shape() string {
	s := SubName("valsz", d.Cfg.ValSize)
	if d.Cfg.MemLimit != 0 {
		s += "/" + SubName("mem", d.Cfg.MemLimit.String())
	}
	return s
}

// LeafName is the name of a leaf on the run's data set: Shape, then the
// key=value parts kv (SubName): "valsz=1024/cache=warm/threads=16".
func (d *RunData) LeafName(kv ...any) string { return d.Shape() + "/" + SubName(kv...) }
