package power

import (
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/aclements/go-moremath/stats"

	"github.com/kvbench/kvbench/benchstat/internal/gate"
)

// round is one measured A/A round: every series' base and head value.
type round struct {
	base, head map[gate.Key]float64
}

// pooledRounds reads the rounds of every A/A comparison in dir
// (aa-*/base.txt and head.txt, round i is the i-th value of each series)
// and the units each family gates.
func pooledRounds(dir string) ([]round, *gate.Set, error) {
	runs, err := filepath.Glob(filepath.Join(dir, "aa-*", "gate.md"))
	for i, r := range runs {
		runs[i] = filepath.Dir(r)
	}
	if err != nil || len(runs) == 0 {
		return nil, nil, fmt.Errorf("no A/A comparisons (aa-*) in %s", dir)
	}
	var pool []round
	var meta *gate.Set
	for _, run := range runs {
		b, err := gate.ReadFiles(filepath.Join(run, "base.txt"))
		if err != nil {
			return nil, nil, err
		}
		h, err := gate.ReadFiles(filepath.Join(run, "head.txt"))
		if err != nil {
			return nil, nil, err
		}
		meta = b
		n := -1
		for k, v := range b.Values {
			if n < 0 || len(v) < n {
				n = len(v)
			}
			if len(h.Values[k]) < n {
				n = len(h.Values[k])
			}
		}
		for i := 0; i < n; i++ {
			r := round{base: map[gate.Key]float64{}, head: map[gate.Key]float64{}}
			for k, v := range b.Values {
				r.base[k], r.head[k] = v[i], h.Values[k][i]
			}
			pool = append(pool, r)
		}
	}
	return pool, meta, nil
}

var timeUnit = regexp.MustCompile(`(^|-)ns(/op)?$`) // ns/op, cpu-ns/op, p50-ns

// resampledRate is the share of trials in which the gate fails on n rounds
// drawn from the pool, with head's time units of one engine (drawn per
// trial) slowed by shift. With shift 0 it is the A/A false-alarm rate.
func resampledRate(pool []round, meta *gate.Set, engines []string, n int, shift float64, o gate.Options, trials int, seed uint64) float64 {
	rng := rand.New(rand.NewPCG(seed, uint64(n)))
	fails := 0
	for range trials {
		slowed := "ReadRandom" + engines[rng.IntN(len(engines))] + "/"
		b, h := gate.NewSet(), gate.NewSet()
		b.Units, h.Units, b.Gate, h.Gate = meta.Units, meta.Units, meta.Gate, meta.Gate
		for range n {
			r := pool[rng.IntN(len(pool))]
			for k, v := range r.base {
				hv := r.head[k]
				if shift != 0 && strings.HasPrefix(k.Name, slowed) && timeUnit.MatchString(k.Unit) {
					hv *= 1 + shift
				}
				b.Values[k] = append(b.Values[k], v)
				h.Values[k] = append(h.Values[k], hv)
			}
		}
		if gate.Failed(gate.Compare(b, h, o)) {
			fails++
		}
	}
	return float64(fails) / float64(trials)
}

// writeRoundsTable resamples the measured A/A rounds to show what other
// round counts and thresholds would give: the false-alarm rate of a whole
// comparison and the chance of catching a slowdown of one engine.
func writeRoundsTable(path string, pool []round, meta *gate.Set, engines []string, stdout io.Writer) error {
	var b strings.Builder
	shifts := []float64{0, 0.02, 0.05, 0.10}
	fmt.Fprintf(&b, "Resampled from %d measured A/A rounds (1000 comparisons per cell): comparisons failed, at alpha 0.05 Holm-corrected.\n\n", len(pool))
	fmt.Fprintf(&b, "| rounds | threshold | A/A | 2%% slower | 5%% slower | 10%% slower |\n|--:|--:|--:|--:|--:|--:|\n")
	for _, n := range []int{10, 20, 40, 80} {
		for _, thr := range []float64{0.03, 0.05} {
			o := gate.Options{Alpha: 0.05, Threshold: thr, SimThreshold: thr, Holm: true}
			fmt.Fprintf(&b, "| %d | %g%% |", n, thr*100)
			for i, s := range shifts {
				fmt.Fprintf(&b, " %.1f%% |", 100*resampledRate(pool, meta, engines, n, s, o, 1000, uint64(i+1)))
			}
			b.WriteString("\n")
		}
	}
	return writeTo(path, b.String(), stdout)
}

// writeUnitsTable is each gated unit's smallest detectable worsening (the
// gate's own estimate from a comparison's noise), median over the A/A
// comparisons, by engine: the noise each unit carries on this machine.
func writeUnitsTable(path, dir string, engines []string, stdout io.Writer) error {
	runs, _ := filepath.Glob(filepath.Join(dir, "aa-*", "gate.md"))
	det := map[string][]float64{} // engine + " " + unit
	var units []string
	for _, md := range runs {
		run := filepath.Dir(md)
		b, err1 := gate.ReadFiles(filepath.Join(run, "base.txt"))
		h, err2 := gate.ReadFiles(filepath.Join(run, "head.txt"))
		if err := errors.Join(err1, err2); err != nil {
			return fmt.Errorf("%s: %w", run, err)
		}
		for _, r := range gate.Compare(b, h, gate.Options{Alpha: 0.05, Threshold: gate.DefaultThreshold, SimThreshold: gate.DefaultSimThreshold, Holm: true}) {
			m := readRandom.FindStringSubmatch(r.Name)
			if m == nil || math.IsNaN(r.Detectable) { // not tested
				continue
			}
			k := m[1] + " " + r.Unit
			if det[k] == nil && !slices.Contains(units, r.Unit) {
				units = append(units, r.Unit)
			}
			det[k] = append(det[k], r.Detectable)
		}
	}
	sort.Strings(units)
	var b strings.Builder
	fmt.Fprintf(&b, "Smallest worsening each unit could have failed (80%% of runs), median over %d A/A comparisons:\n\n| engine |", len(runs))
	for _, u := range units {
		fmt.Fprintf(&b, " %s |", u)
	}
	b.WriteString("\n|---|" + strings.Repeat("--:|", len(units)) + "\n")
	for _, e := range engines {
		fmt.Fprintf(&b, "| %s |", e)
		for _, u := range units {
			if v := det[e+" "+u]; len(v) > 0 {
				fmt.Fprintf(&b, " %.1f%% |", 100*stats.Sample{Xs: v}.Quantile(0.5))
			} else {
				b.WriteString(" |")
			}
		}
		b.WriteString("\n")
	}
	return writeTo(path, b.String(), stdout)
}

// writeTo writes a table to path and prints it as written.
func writeTo(path, text string, stdout io.Writer) error {
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		return err
	}
	_, err := io.WriteString(stdout, text)
	return err
}
