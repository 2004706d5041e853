package kvbench

import (
	"flag"

	"github.com/kvbench/kvbench/internal/bench"
)

// cfg is the run's configuration: every flag of the suite binds to one of
// its fields here, and TestMain hands it, validated, to the benchmarks.
// No benchmark body reads a flag.
var cfg = bench.Default()

func init() { cfg.Bind(flag.CommandLine) }
