package kvbench

import (
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/kvbench/kvbench/internal/dataset"
)

// traceSet is the data set BenchmarkPrefetch* reads, set by
// parsePrefetchConfig.
var traceSet *dataset.Traces

// validatePrefetchFlags checks the trace data set's flags.
func validatePrefetchFlags() []error {
	var errs []error
	if n := *flagPrefetchTraces; n < 1 || n > dataset.MaxTraces {
		errs = append(errs, flagError("prefetch_traces", n, fmt.Sprintf("must be from 1 to %d (the seed's full size)", dataset.MaxTraces)))
	}
	if v := *flagPrefetchValSize; v < 1 || v > 64<<20 {
		errs = append(errs, flagError("prefetch_valsz", v, "must be from 1 to 67108864 bytes"))
	}
	return errs
}

// parsePrefetchConfig builds the trace data set from validated flags.
func parsePrefetchConfig() error {
	t, err := dataset.NewTraces(*flagPrefetchTraces, *flagPrefetchValSize, *flagValueRatio, *flagSeed)
	if err != nil {
		return err
	}
	traceSet = t
	return nil
}

// printPrefetchConfig echoes the trace data set and the lookup settings
// that are not in benchmark names.
func printPrefetchConfig(w io.Writer) {
	line := func(k string, v any) { fmt.Fprintf(w, "%s: %v\n", k, v) }
	line("prefetch-traces", *flagPrefetchTraces)
	line("prefetch-keys", fmt.Sprintf("%d (%d spans per trace)", *flagPrefetchTraces*dataset.SpansPerTrace, dataset.SpansPerTrace))
	line("prefetch-valsz", *flagPrefetchValSize)
	line("prefetch-order", "lookups visit trace IDs in ascending order, as the seed did; op i is trace i mod prefetch-traces")
	line("prefetch-cold", "before the timed loop: store closed, its files evicted from the page cache (fadvise DONTNEED), store reopened untimed")
	line("prefetch-warm", "before the timed loop: the same lookups run once, untimed")
	if cfg.dir != "" {
		line("dir-readahead", deviceReadahead(cfg.dir))
	}
}

// deviceReadahead is the kernel readahead of the block device under dir.
// A page fault in a memory-mapped file reads up to this much around the
// page, so on a cold cache it shapes what mmap-based stores read.
func deviceReadahead(dir string) string {
	var st syscall.Stat_t
	if err := syscall.Stat(dir, &st); err != nil {
		return "unknown"
	}
	dev := fmt.Sprintf("/sys/dev/block/%d:%d", unix.Major(st.Dev), unix.Minor(st.Dev))
	// A partition has no queue of its own: its disk is the parent.
	for _, p := range []string{dev + "/queue/read_ahead_kb", dev + "/../queue/read_ahead_kb"} {
		if b, err := os.ReadFile(p); err == nil {
			return strings.TrimSpace(string(b)) + " KiB (" + p + ")"
		}
	}
	return "unknown (no block device: tmpfs, overlay or network filesystem)"
}
