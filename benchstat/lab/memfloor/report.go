package memfloor

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/kvbench/kvbench/benchstat/internal/results"
)

// resultWriter writes the results in Go benchmark format: each result
// line after the configuration lines it was measured under, written only
// where they change, as benchfmt reads them back.
type resultWriter struct {
	out   io.Writer
	own   []kv // memfloor-* lines, on every result
	cfg   []kv // the configuration in force in the output
	lines bool // a result line was written since the last configuration block
	units map[string]bool
	err   error
}

type kv struct{ k, v string }

func newResultWriter(out io.Writer, c config) *resultWriter {
	return &resultWriter{
		out: out,
		own: []kv{
			{"memfloor-multiple", strconv.FormatFloat(c.multiple, 'g', -1, 64)},
			{"memfloor-resolution", c.res.String()},
			{"memfloor-rule", "the smallest whole-MiB -mem_limit in which BenchmarkPopulate<Engine>/valsz/mem/batch/sync=false (one op) exits 0 within memfloor-multiple of its reference ns/op (populate in a budget of twice the data); reads: BenchmarkReadRandom<Engine>/valsz/mem/cache=warm in that budget"},
		},
		units: map[string]bool{},
	}
}

func (w *resultWriter) printf(format string, args ...any) {
	if w.err == nil {
		_, w.err = fmt.Fprintf(w.out, format, args...)
	}
}

// header declares the units of the floor lines.
func (w *resultWriter) header() {
	for _, u := range []string{"floor-MiB better=lower", "floor/data better=lower", "keys/s better=higher",
		"x-reference better=lower", "read-ops/s better=higher", "trials assume=exact"} {
		w.unit(u)
	}
}

func (w *resultWriter) unit(u string) {
	if !w.units[u] {
		if w.lines {
			w.printf("\n")
			w.lines = false
		}
		w.units[u] = true
		w.printf("Unit %s\n", u)
	}
}

// result writes line under cfg (after the command's own lines): first the
// lines that changed, a key with nothing after it for one that is gone.
func (w *resultWriter) result(cfg []kv, line string) error {
	cfg = append(slices.Clone(w.own), cfg...)
	if !slices.Equal(cfg, w.cfg) {
		if w.lines {
			w.printf("\n")
		}
		for _, old := range w.cfg {
			if !slices.ContainsFunc(cfg, func(c kv) bool { return c.k == old.k }) {
				w.printf("%s:\n", old.k)
			}
		}
		for _, c := range cfg {
			if !slices.Contains(w.cfg, c) {
				w.printf("%s: %s\n", c.k, c.v)
			}
		}
		w.cfg, w.lines = cfg, false
	}
	w.printf("%s\n", line)
	w.lines = true
	return w.err
}

// fileConfig is a result's configuration lines, less the keys in drop.
func fileConfig(r *results.Result, drop ...string) []kv {
	var out []kv
	for _, l := range r.Labels {
		if !slices.Contains(drop, l.Key) {
			out = append(out, kv{l.Key, l.Value})
		}
	}
	return out
}

// child copies a child's result line as it printed it, under its own
// configuration, with the child's unit lines for its units, in the order
// of their units.
func (w *resultWriter) child(c *childRun, r *results.Result) error {
	var lines []string
	for _, u := range c.units {
		if _, ok := r.Value(u.OrigUnit); ok {
			lines = append(lines, fmt.Sprintf("%s %s=%s", u.OrigUnit, u.Key, u.Value))
		}
	}
	slices.Sort(lines)
	for _, l := range lines {
		w.unit(l)
	}
	return w.result(fileConfig(r), c.line(r))
}

// floor writes an engine and shape's floor line, under the configuration
// its populate run printed at the floor, less the budget (floor-MiB
// carries it).
func (w *resultWriter) floor(r row, at *results.Result, refNs float64) error {
	ns, _ := at.Value("ns/op")
	var b strings.Builder
	b.WriteString("Benchmark" + floorName(r.engine, r.shape) + "\t1")
	val := func(v float64, unit string) { fmt.Fprintf(&b, "\t%s %s", strconv.FormatFloat(v, 'f', -1, 64), unit) }
	val(math.Round(ns), "ns/op")
	val(float64(r.s.floor), "floor-MiB")
	val(sig3(float64(r.s.floor<<20)/float64(r.shape.dataBytes())), "floor/data")
	val(math.Round(r.floorKeysS), "keys/s")
	val(sig3(ns/refNs), "x-reference")
	if r.readOps > 0 {
		val(math.Round(r.readOps), "read-ops/s")
	}
	val(float64(len(r.s.trials)), "trials")
	return w.result(fileConfig(at, "mem-limit"), b.String())
}

// aboveData notes, as a line benchstat skips, an engine whose floor is
// above the data size: there is no floor to compare.
func (w *resultWriter) aboveData(eng string, sh shape, hiMiB int, o outcome) error {
	if w.lines {
		w.printf("\n")
	}
	w.printf("# memfloor: %s: floor above the data size: %v at %dMiB, the search's upper bound\n", floorName(eng, sh), o, hiMiB)
	return w.err
}

func floorName(eng string, sh shape) string {
	return fmt.Sprintf("MemFloor%s/valsz=%d/keys=%d", eng, sh.valsz, sh.keys)
}

func sig3(x float64) float64 {
	v, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'g', 3, 64), 64)
	return v
}

// table prints the rows as Markdown, for docs.
func (m *memfloor) table() {
	if len(m.rows) == 0 {
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n| engine | shape | data | floor | floor ÷ data | populate keys/s at the floor | reference (2× data budget) | reads ops/s at the floor | disk ops/s | trials |\n")
	fmt.Fprintf(&b, "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	disk := si(m.diskOps)
	if m.diskOps == 0 {
		disk = "" // -dir in memory: no device
	}
	for _, r := range m.rows {
		data := mib(r.shape.dataBytes())
		if r.s.floor == 0 {
			last := r.s.trials[len(r.s.trials)-1]
			fmt.Fprintf(&b, "| %s | %s | %s | > %d MiB (%v) | > %.2f | | %s | | %s | %d |\n", r.engine, r.shape, data, r.s.hi, last.outcome,
				float64(r.s.hi<<20)/float64(r.shape.dataBytes()), si(r.refKeysS), disk, len(r.s.trials))
			continue
		}
		reads := si(r.readOps)
		if r.readOps == 0 {
			reads = r.readNote
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %d MiB | %.2f | %s | %s | %s | %s | %d |\n", r.engine, r.shape, data, r.s.floor,
			float64(r.s.floor<<20)/float64(r.shape.dataBytes()), si(r.floorKeysS), si(r.refKeysS), reads, disk, len(r.s.trials))
	}
	fmt.Fprintf(&b, "\nmultiple %g, resolution %s\n", m.multiple, m.res)
	fmt.Fprint(m.log, b.String())
}

// si writes a rate with three significant digits and k or M.
func si(x float64) string {
	switch {
	case x >= 1e6:
		return strconv.FormatFloat(sig3(x/1e6), 'f', -1, 64) + "M"
	case x >= 1e3:
		return strconv.FormatFloat(sig3(x/1e3), 'f', -1, 64) + "k"
	}
	return strconv.FormatFloat(sig3(x), 'f', -1, 64)
}
