package bench

import (
	"flag"
	"fmt"

	"github.com/kvbench/kvbench/internal/dataset"
)

// PrefetchConfig is the prefetch workloads' part of the run configuration:
// seed 000's trace data set (BenchmarkPrefetch*).
type PrefetchConfig struct {
	Traces  int // trace IDs, SpansPerTrace keys each
	ValSize int // value size in bytes

	// traces is the data set, derived once per run by init.
	traces *dataset.Traces
}

func (c *PrefetchConfig) defaults() {
	c.Traces = 600
	c.ValSize = 2500
}

func (c *PrefetchConfig) bind(fs *flag.FlagSet) {
	fs.IntVar(&c.Traces, "prefetch_traces", c.Traces, "trace IDs in the prefix-lookup data set, 90 keys each; 9000 is the seed's full size (810,000 keys)")
	fs.IntVar(&c.ValSize, "prefetch_valsz", c.ValSize, "value size in bytes of the prefix-lookup data set")
}

// validate checks the trace data set's flags.
func (c *PrefetchConfig) validate() []error {
	var errs []error
	if n := c.Traces; n < 1 || n > dataset.MaxTraces {
		errs = append(errs, flagError("prefetch_traces", n, fmt.Sprintf("must be from 1 to %d (the seed's full size)", dataset.MaxTraces)))
	}
	if v := c.ValSize; v < 1 || v > 64<<20 {
		errs = append(errs, flagError("prefetch_valsz", v, "must be from 1 to 67108864 bytes"))
	}
	return errs
}

// echo prints the trace data set and the lookup settings that are not in
// benchmark names.
func (c *PrefetchConfig) echo(e *Env, line func(string, any)) {
	line("prefetch-traces", c.Traces)
	line("prefetch-keys", fmt.Sprintf("%d (%d spans per trace)", c.Traces*dataset.SpansPerTrace, dataset.SpansPerTrace))
	line("prefetch-valsz", c.ValSize)
	line("prefetch-order", "lookups visit trace IDs in ascending order, as the seed did; op i is trace i mod prefetch-traces")
	line("prefetch-cold", "before the timed loop: store closed, its files evicted from the page cache (fadvise DONTNEED), store reopened untimed")
	line("prefetch-warm", "before the timed loop: the same lookups run once, untimed")
}

// init derives the trace data set from the validated flags and the run's
// seed and value ratio.
func (c *PrefetchConfig) init(e *Env) error {
	t, err := dataset.NewTraces(c.Traces, c.ValSize, e.Cfg.ValueRatio, e.Cfg.Seed)
	if err != nil {
		return err
	}
	c.traces = t
	return nil
}
