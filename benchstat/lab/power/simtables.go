package power

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/kvbench/kvbench/benchstat/internal/gate"
)

// simUnits are the units sim mode gates.
var simUnits = map[string]bool{"instr/op": true, "est-cycles/op": true}

// writeSimTables writes, from the comparisons already in dir, spread.md
// (each counted series' round-to-round spread over the A/A rounds) and
// thresholds.md (how often the gate would fail the A/A comparisons, and
// catch each slowed engine, at each sim threshold): the figures the sim
// threshold is chosen from.
func writeSimTables(dir string, thresholds []float64, stdout io.Writer) error {
	pool, _, err := pooledRounds(dir)
	if err != nil {
		return err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Per-round change log(head/base) between two runs of one binary, pooled over %d A/A rounds: spread = 1.4826 × MAD, and the largest.\n\n", len(pool))
	fmt.Fprintf(&b, "| series | unit | median | spread | largest |\n|---|---|--:|--:|--:|\n")
	keys := map[gate.Key]bool{}
	for _, r := range pool {
		for k := range r.base {
			if simUnits[k.Unit] {
				keys[k] = true
			}
		}
	}
	sorted := make([]gate.Key, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].String() < sorted[j].String() })
	for _, k := range sorted {
		var d, vals []float64
		for _, r := range pool {
			bv, ok1 := r.base[k]
			hv, ok2 := r.head[k]
			if ok1 && ok2 && bv > 0 && hv > 0 {
				d = append(d, math.Log(hv/bv))
				vals = append(vals, bv, hv)
			}
		}
		if len(d) == 0 {
			continue
		}
		largest := 0.0
		for _, x := range d {
			largest = math.Max(largest, math.Abs(x))
		}
		fmt.Fprintf(&b, "| `%s` | %s | %.0f | %.2f%% | %.2f%% |\n", shortName(k.Name), k.Unit, med(vals), 100*1.4826*mad(d), 100*math.Expm1(largest))
	}
	if err := write(filepath.Join(dir, "spread.md"), b.String(), stdout); err != nil {
		return err
	}

	b.Reset()
	aa, _ := filepath.Glob(filepath.Join(dir, "aa-*", "base.txt"))
	slow, _ := filepath.Glob(filepath.Join(dir, "slow*-*", "base.txt"))
	fmt.Fprintf(&b, "| sim threshold | A/A comparisons failed |")
	levels := map[float64][]string{}
	var pcts []float64
	for _, s := range slow {
		p, err := strconv.ParseFloat(strings.TrimPrefix(strings.SplitN(filepath.Base(filepath.Dir(s)), "-", 2)[0], "slow"), 64)
		if err != nil {
			continue
		}
		if levels[p] == nil {
			pcts = append(pcts, p)
		}
		levels[p] = append(levels[p], filepath.Dir(s))
	}
	sort.Float64s(pcts)
	for _, p := range pcts {
		fmt.Fprintf(&b, " %g%% slower: engines caught |", p)
	}
	fmt.Fprintf(&b, "\n|--:|--:|%s\n", strings.Repeat("--:|", len(pcts)))
	for _, thr := range thresholds {
		o := gate.Options{Alpha: 0.05, Threshold: gate.DefaultThreshold, SimThreshold: thr / 100, Holm: true}
		failed := 0
		for _, a := range aa {
			reg, err := regressions(filepath.Dir(a), o)
			if err != nil {
				return err
			}
			if len(reg) > 0 {
				failed++
			}
		}
		fmt.Fprintf(&b, "| %g%% | %d of %d |", thr, failed, len(aa))
		for _, p := range pcts {
			caught, trials := 0, 0
			for _, run := range levels[p] {
				reg, err := regressions(run, o)
				if err != nil {
					return err
				}
				engines, err := readEngines(run)
				if err != nil {
					return err
				}
				for _, eng := range engines {
					trials++
					if reg["ReadRandom"+eng] {
						caught++
					}
				}
			}
			fmt.Fprintf(&b, " %d of %d |", caught, trials)
		}
		fmt.Fprintln(&b)
	}
	if err := write(filepath.Join(dir, "thresholds.md"), b.String(), stdout); err != nil {
		return err
	}
	return writeInjected(dir, aa, []float64{0.5, 1, 2}, thresholds, stdout)
}

// writeInjected writes injected.md: each A/A comparison's head rounds
// with every engine's reads made p% more instructions (instr/op times
// 1+p, est-cycles/op plus the same instructions: a countdown adds no
// misses), gated at each threshold. It estimates what a slowed run would
// show at the measured noise, where a slowed run was not made.
func writeInjected(dir string, aa []string, pcts, thresholds []float64, stdout io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Estimated from the %d A/A comparisons with the slowdown added to their head rounds: engines caught, of all engine-comparisons.\n\n| sim threshold |", len(aa))
	for _, p := range pcts {
		fmt.Fprintf(&b, " %g%% slower |", p)
	}
	fmt.Fprintf(&b, "\n|--:|%s\n", strings.Repeat("--:|", len(pcts)))
	// byEngine[p][engine] counts the catches at the default threshold.
	byEngine := map[float64]map[string]int{}
	var allEngines []string
	for _, thr := range thresholds {
		o := gate.Options{Alpha: 0.05, Threshold: gate.DefaultThreshold, SimThreshold: thr / 100, Holm: true}
		fmt.Fprintf(&b, "| %g%% |", thr)
		for _, p := range pcts {
			caught, trials := 0, 0
			for _, a := range aa {
				run := filepath.Dir(a)
				base, err := gate.ReadFiles(filepath.Join(run, "base.txt"))
				if err != nil {
					return err
				}
				head, err := gate.ReadFiles(filepath.Join(run, "head.txt"))
				if err != nil {
					return err
				}
				engines, err := readEngines(run)
				if err != nil {
					return err
				}
				slowed := map[string]bool{}
				orig := map[gate.Key][]float64{}
				for k, v := range head.Values {
					orig[k] = v
				}
				for k, v := range orig {
					m := readRandom.FindStringSubmatch(k.Name)
					if m == nil {
						continue
					}
					instr := orig[gate.Key{Name: k.Name, Unit: "instr/op"}]
					out := make([]float64, len(v))
					for i := range v {
						switch k.Unit {
						case "instr/op":
							out[i] = v[i] * (1 + p/100)
						case "est-cycles/op":
							out[i] = v[i] + instr[i]*p/100
						default:
							out[i] = v[i]
						}
					}
					head.Values[k] = out
					slowed[m[1]] = true
				}
				reg := map[string]bool{}
				for _, r := range gate.Compare(base, head, o) {
					if r.Verdict == gate.Regression {
						reg[strings.SplitN(r.Name, "/", 2)[0]] = true
					}
				}
				for _, e := range engines {
					trials++
					if reg["ReadRandom"+e] {
						caught++
					}
					if thr == gate.DefaultSimThreshold*100 {
						if byEngine[p] == nil {
							byEngine[p] = map[string]int{}
						}
						if !slices.Contains(allEngines, e) {
							allEngines = append(allEngines, e)
						}
						if reg["ReadRandom"+e] {
							byEngine[p][e]++
						}
					}
				}
			}
			fmt.Fprintf(&b, " %d of %d |", caught, trials)
		}
		fmt.Fprintln(&b)
	}
	if len(byEngine) > 0 {
		sort.Strings(allEngines)
		fmt.Fprintf(&b, "\nAt the default sim threshold (%g%%), per engine, of %d comparisons each:\n\n| engine |", gate.DefaultSimThreshold*100, len(aa))
		for _, p := range pcts {
			fmt.Fprintf(&b, " %g%% slower |", p)
		}
		fmt.Fprintf(&b, "\n|---|%s\n", strings.Repeat("--:|", len(pcts)))
		for _, e := range allEngines {
			fmt.Fprintf(&b, "| %s |", e)
			for _, p := range pcts {
				fmt.Fprintf(&b, " %d |", byEngine[p][e])
			}
			fmt.Fprintln(&b)
		}
	}
	return write(filepath.Join(dir, "injected.md"), b.String(), stdout)
}

// regressions gates one comparison directory at o and returns the
// families-and-engines (the first name element) that failed.
func regressions(run string, o gate.Options) (map[string]bool, error) {
	b, err := gate.ReadFiles(filepath.Join(run, "base.txt"))
	if err != nil {
		return nil, err
	}
	h, err := gate.ReadFiles(filepath.Join(run, "head.txt"))
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, r := range gate.Compare(b, h, o) {
		if r.Verdict == gate.Regression || r.Verdict == gate.Missing {
			out[strings.SplitN(r.Name, "/", 2)[0]] = true
		}
	}
	return out, nil
}

// readEngines lists the engines whose ReadRandom a comparison ran.
func readEngines(run string) ([]string, error) {
	s, err := series(filepath.Join(run, "base.txt"), "instr/op")
	if err != nil {
		return nil, err
	}
	set := map[string]bool{}
	for name := range s {
		if m := readRandom.FindStringSubmatch(name); m != nil {
			set[m[1]] = true
		}
	}
	var out []string
	for e := range set {
		out = append(out, e)
	}
	sort.Strings(out)
	return out, nil
}

var shape = regexp.MustCompile(`/(valsz|cache|hit|scan_len|threads)=[^/]*`)

// shortName drops the name levels every series shares in a comparison.
func shortName(n string) string { return shape.ReplaceAllString(n, "") }

func med(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func mad(xs []float64) float64 {
	c := med(xs)
	dev := make([]float64, len(xs))
	for i, x := range xs {
		dev[i] = math.Abs(x - c)
	}
	return med(dev)
}

// write writes a table to path and prints it.
func write(path, text string, stdout io.Writer) error {
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		return err
	}
	_, err := fmt.Fprint(stdout, text, "\n")
	return err
}
