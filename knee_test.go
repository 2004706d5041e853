package kvbench

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/engine"
)

// TestKneeTwiceInOneProcess runs every engine's knee searches twice in one
// process (-count 2: testing calls each leaf's body again), as a user
// repeating them would, at a tiny size and short trials. What it holds is
// what does not depend on the machine's speed: every leaf reports both
// searches; each search starts afresh at -knee_start (state left over
// from the first search would start the second elsewhere) and doubles
// from there; and the knee each reports is the last rate its own trials
// sustained (every trial of it), with its p99 within the SLO. Where the
// knee lands is the machine's speed, which two searches may measure
// differently on a busy machine: it is a figure, not a pass/fail check.
func TestKneeTwiceInOneProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the test binary")
	}
	t.Parallel() // its child waits on the trials' timers: beside the other child-process tests
	const slo, start = 5 * time.Second, 8000
	out, code := runSelf(t, "-test.bench=^BenchmarkKnee", "-test.benchtime=1x", "-test.count=2",
		"-keys_mil", "0.002", "-valsz", "64", "-knee_time", "20ms", "-knee_max_time", "20ms",
		"-knee_start", strconv.Itoa(start), "-knee_steps", "0", "-load_workers", "1", "-slo", slo.String(), "-dir", t.TempDir())
	if code != 0 || strings.Contains(out, "--- FAIL") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	if faults := kneeSearches(out, start, slo); len(faults) > 0 {
		t.Fatalf("%s\n%s", strings.Join(faults, "\n"), out)
	}
}

// kneeSearch is one search as the child printed it: the knee and p99 its
// result line reports, and the rates its trials tried, in order, with
// whether each trial sustained its rate.
type kneeSearch struct {
	knee, p99 float64
	rates     []int
	sustained []bool
	truncated bool // testing cut the log: its last trials are not there
}

// kneeSearches checks the knee searches in out and returns its faults:
// each leaf reports two searches, each starts at start and doubles, and
// each reports as its knee the last rate whose every trial was sustained
// (0 when the start was not; where testing cut the log, at least the last
// it shows), its p99 within the SLO.
func kneeSearches(out string, start int, slo time.Duration) (faults []string) {
	searches := map[string][]*kneeSearch{} // leaf -> its searches
	var cur *kneeSearch                    // the search whose trials follow
	for _, line := range strings.Split(out, "\n") {
		switch f := strings.Fields(line); {
		case strings.HasPrefix(line, "BenchmarkKnee") && len(f) > 2:
			cur = &kneeSearch{knee: metric(f, "knee-ops/s"), p99: metric(f, "knee-p99-ns")}
			searches[f[0]] = append(searches[f[0]], cur)
		case cur != nil && strings.Contains(line, "[output truncated]"):
			cur.truncated = true
		case cur != nil && strings.Contains(line, " knee: ") && strings.Contains(line, " ops/s for "):
			_, trial, _ := strings.Cut(line, " knee: ")
			rate, err := strconv.Atoi(strings.Fields(trial)[0])
			if err != nil {
				faults = append(faults, "unreadable trial: "+line)
				continue
			}
			cur.rates = append(cur.rates, rate)
			cur.sustained = append(cur.sustained, strings.Contains(line, ": sustained (trial"))
		}
	}
	want := 0
	for _, info := range engine.All() {
		if info.Missing != "" {
			continue
		}
		for _, op := range []string{"get", "upsert"} {
			n := 0
			for leaf, s := range searches {
				eng, rest, _ := strings.Cut(strings.TrimPrefix(leaf, "BenchmarkKnee"), "/")
				if strings.EqualFold(eng, info.Name) && strings.HasPrefix(rest, "op="+op+"/") {
					n += len(s)
				}
			}
			if want++; n != 2 {
				faults = append(faults, fmt.Sprintf("%s op=%s: %d searches reported, want 2", info.Name, op, n))
			}
		}
	}
	if len(searches) != want {
		faults = append(faults, fmt.Sprintf("%d leaves, want %d", len(searches), want))
	}
	for leaf, ss := range searches {
		for i, s := range ss {
			if len(s.rates) == 0 || s.rates[0] != start {
				faults = append(faults, fmt.Sprintf("%s search %d: trials at %v ops/s, want the first at %d", leaf, i+1, s.rates, start))
				continue
			}
			knee := 0 // the last rate every trial of which was sustained
			for j, r := range s.rates {
				if r != s.rates[0] && r != 2*s.rates[j-1] && r != s.rates[j-1] {
					faults = append(faults, fmt.Sprintf("%s search %d: %d ops/s after %d: not a doubling", leaf, i+1, r, s.rates[j-1]))
				}
				if !s.sustained[j] {
					break
				}
				if j+1 == len(s.rates) || s.rates[j+1] != r {
					knee = r
				}
			}
			// A cut log shows the knee's start: the knee is at least the
			// last rate it shows sustained, the start doubled.
			cut := s.truncated && s.knee >= float64(knee) && s.knee == float64(start)*math.Exp2(math.Round(math.Log2(s.knee/float64(start))))
			if s.knee != float64(knee) && !cut {
				faults = append(faults, fmt.Sprintf("%s search %d: knee %v ops/s, but its trials sustained %d", leaf, i+1, s.knee, knee))
			}
			if knee > 0 && !(s.p99 > 0 && s.p99 <= float64(slo)) {
				faults = append(faults, fmt.Sprintf("%s search %d: p99 %v ns, outside the SLO %v", leaf, i+1, s.p99, slo))
			}
		}
	}
	return faults
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
