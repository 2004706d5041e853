package workload

import (
	"errors"
	"fmt"

	"github.com/kvbench/kvbench/internal/core"
	"github.com/kvbench/kvbench/internal/dataset"
)

// Seed 000's trace data set (BenchmarkPrefetch*): its size and value
// size, which name its fixtures; the lines of the first also say how many
// keys that is, the second's how the lookups run.
var (
	prefetchTracesFlag = &core.Flag[int]{Name: "prefetch_traces", Default: 600, Shapes: true,
		Usage: "trace IDs in the prefix-lookup data set, 90 keys each; 9000 is the seed's full size (810,000 keys)",
		Check: func(n int, _ *core.Config) error {
			if n < 1 || n > dataset.MaxTraces {
				return fmt.Errorf("must be from 1 to %d (the seed's full size)", dataset.MaxTraces)
			}
			return nil
		},
		Echo: func(n int, _ *core.Config, line func(string, any)) {
			line("prefetch-traces", n)
			line("prefetch-keys", fmt.Sprintf("%d (%d spans per trace)", n*dataset.SpansPerTrace, dataset.SpansPerTrace))
		}}
	prefetchValSizeFlag = &core.Flag[int]{Name: "prefetch_valsz", Default: 2500, Shapes: true,
		Usage: "value size in bytes of the prefix-lookup data set",
		Check: func(v int, _ *core.Config) error {
			if v < 1 || v > 64<<20 {
				return errors.New("must be from 1 to 67108864 bytes")
			}
			return nil
		},
		Echo: func(v int, _ *core.Config, line func(string, any)) {
			line("prefetch-valsz", v)
			line("prefetch-order", "lookups visit trace IDs in ascending order, as the seed did; op i is trace i mod prefetch-traces")
			line("prefetch-cold", "before the timed loop: store closed, its files evicted from the page cache (fadvise DONTNEED), store reopened untimed")
			line("prefetch-warm", "before the timed loop: the same lookups run once, untimed")
		}}
)

// traces is the run's trace data set, from the flags and the run's seed
// and value ratio (validated: it cannot fail).
func traces(e *core.Env) *dataset.Traces {
	c := &e.Cfg
	t, err := dataset.NewTraces(prefetchTracesFlag.Get(c), prefetchValSizeFlag.Get(c), c.ValueRatio, c.Seed)
	if err != nil {
		panic("prefetch: the validated flags make no trace data set: " + err.Error())
	}
	return t
}
