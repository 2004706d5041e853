package kvbench

import (
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/core/coretest"
	"github.com/kvbench/kvbench/internal/engine"
)

// pauseLogEnv names the file a child of this test binary writes the
// longest pause of the machine it saw to (coretest.WatchPauses).
const pauseLogEnv = "KVBENCH_PAUSE_LOG"

// TestKneeTwiceInOneProcess runs every engine's knee searches twice in one
// process (-count 2: testing calls each leaf's body again), as a user
// repeating them would, at a tiny size and short trials: every leaf
// reports both searches, each with a knee (a rate the search tried:
// without bisection steps, the start doubled) and its p99 within the SLO,
// and the second search finds the knee the first found. The knee is where
// the machine's speed ends, so two searches may land one step apart (a
// doubling, the search's step without bisection), not more. A trial
// passes only if every operation due in its 20 ms ran before the hard
// stop, so a pause of the machine of a few ms at the wrong moment fails a
// rate below the knee, and a pause of 20 ms any rate: beside make bench
// that happened to one search in one of ten runs. A run in which the
// child saw at least as many such pauses (of 5 ms or more; a sleeping
// goroutine wakes under 1 ms late on an idle machine) as leaves with
// knees apart is run again, up to three runs; knees apart that the pauses
// do not explain, or any other fault, fail at once. That the reported p99
// is within the SLO is the search's own rule, not a speed.
func TestKneeTwiceInOneProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the test binary")
	}
	t.Parallel() // its child waits on the trials' timers: beside the other child-process tests
	const slo, start, minPause = 5 * time.Second, 8000, 5 * time.Millisecond
	coretest.Retry(t, 3, func() error {
		pauses := filepath.Join(t.TempDir(), "pauses")
		out, code := runSelfEnv(t, []string{pauseLogEnv + "=" + pauses}, "-test.bench=^BenchmarkKnee", "-test.benchtime=1x", "-test.count=2",
			"-keys_mil", "0.002", "-valsz", "64", "-knee_time", "20ms", "-knee_max_time", "20ms",
			"-knee_start", strconv.Itoa(start), "-knee_steps", "0", "-load_workers", "1", "-slo", slo.String(), "-dir", t.TempDir())
		if code != 0 || strings.Contains(out, "--- FAIL") {
			return fmt.Errorf("exit %d:\n%s", code, out)
		}
		apart, faults := kneeSearches(out, start, slo)
		if len(faults) > 0 {
			return fmt.Errorf("%s\n%s", strings.Join(faults, "\n"), out)
		}
		if len(apart) == 0 {
			return nil
		}
		// A pause lowers the knee of the search it falls in: as many
		// pauses as leaves apart explain them.
		n := coretest.Pauses(pauses, minPause)
		err := fmt.Errorf("%d leaves with knees more than a step apart, %d pauses of %v or more: %s\n%s", len(apart), n, minPause, strings.Join(apart, "; "), out)
		if len(apart) <= n {
			return fmt.Errorf("%w: %w", coretest.ErrPaused, err)
		}
		return err
	})
}

// kneeSearches checks the knee results in out: each leaf reports two
// searches, each knee the start rate doubled with its p99 within the SLO.
// It returns the leaves whose two knees are more than one step (a
// doubling) apart, or 0, apart from every other fault.
func kneeSearches(out string, start int, slo time.Duration) (apart, faults []string) {
	knees := map[string][]float64{} // leaf -> its searches' knees
	for _, line := range strings.Split(out, "\n") {
		if !strings.HasPrefix(line, "BenchmarkKnee") {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 2 {
			continue // a leaf's name before its trials' log
		}
		leaf, knee, p99 := f[0], metric(f, "knee-ops/s"), metric(f, "knee-p99-ns")
		knees[leaf] = append(knees[leaf], knee)
		if knee == 0 {
			continue // no rate sustained: no p99 to check
		}
		if ratio := knee / float64(start); !(ratio >= 1 && ratio == math.Exp2(math.Round(math.Log2(ratio)))) || !(p99 > 0 && p99 <= float64(slo)) {
			faults = append(faults, fmt.Sprintf("%s search %d: knee %v ops/s, p99 %v ns (slo %v): %s", leaf, len(knees[leaf]), knee, p99, slo, line))
		}
	}
	want := 0
	for _, info := range engine.All() {
		if info.Missing != "" {
			continue
		}
		for _, op := range []string{"get", "upsert"} {
			n := 0
			for leaf, k := range knees {
				eng, rest, _ := strings.Cut(strings.TrimPrefix(leaf, "BenchmarkKnee"), "/")
				if strings.EqualFold(eng, info.Name) && strings.HasPrefix(rest, "op="+op+"/") {
					n += len(k)
				}
			}
			if want++; n != 2 {
				faults = append(faults, fmt.Sprintf("%s op=%s: %d searches reported, want 2", info.Name, op, n))
			}
		}
	}
	if len(knees) != want {
		faults = append(faults, fmt.Sprintf("leaves %v, want %d", knees, want))
	}
	for leaf, k := range knees {
		if len(k) == 2 && !(min(k[0], k[1]) > 0 && max(k[0], k[1]) <= 2*min(k[0], k[1])) {
			apart = append(apart, fmt.Sprintf("%s: knees %v", leaf, k))
		}
	}
	return apart, faults
}

// metric is the value before unit on a benchmark result line; NaN when
// the line has none.
func metric(fields []string, unit string) float64 {
	for i := 1; i < len(fields); i++ {
		if fields[i] == unit {
			if v, err := strconv.ParseFloat(fields[i-1], 64); err == nil {
				return v
			}
		}
	}
	return math.NaN()
}
