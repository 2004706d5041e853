package audit

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"golang.org/x/perf/benchmath"

	"github.com/kvbench/kvbench/benchstat/internal/results"
)

const baseline = "baseline"

// decides is the change past which a setting that changes a rank decides it.
const decides = 1.5

// moved is the smallest change counted as a row the setting moves (beside
// the two sides' rounds not overlapping).
const moved = 0.10

// separated reports whether every round of one side is below every round
// of the other: with a handful of rounds, a change the noise could make
// is neither a moved row nor a rank change.
func separated(a, b []float64) bool {
	return slices.Max(a) < slices.Min(b) || slices.Min(a) > slices.Max(b)
}

// A side is one file: an engine at the baseline or with one setting.
type side struct {
	engine, setting, flags string
	rows                   map[string][]float64 // row key -> ns/op per round
}

type sides struct {
	meta  map[string]string
	base  map[string]*side // by engine
	flips []*side
}

// rowKey is a result's row among the engines: its name without the
// engine, the block size (B-trees have none) and GOMAXPROCS; ok is false
// for another engine's result.
func rowKey(name, engine string) (key string, ok bool) {
	op, eng, config := results.Split(strings.TrimPrefix(name, "Benchmark"))
	if eng != engine {
		return "", false
	}
	if config = results.SplitConfig(config).Without("block").String(); config == "" {
		return op, true
	}
	return op + "/" + config, true
}

// shortRow names a row in the table: the workload and what tells its
// leaves apart.
func shortRow(key string) string {
	out, config, _ := strings.Cut(key, "/")
	for _, p := range results.SplitConfig(config) {
		switch p.Key {
		case "workload":
			out += " " + p.Value
		case "threads":
			out += " t=" + p.Value
		case "sync":
			if p.Value == "true" {
				out += " sync"
			}
		}
	}
	return out
}

func load(dir string) (*sides, error) {
	res := &sides{meta: map[string]string{}, base: map[string]*side{}}
	if b, err := os.ReadFile(filepath.Join(dir, "meta.txt")); err == nil {
		sc := bufio.NewScanner(strings.NewReader(string(b)))
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), " "); ok {
				res.meta[k] = v
			}
		}
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.txt"))
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		if filepath.Base(f) == "meta.txt" {
			continue
		}
		s, err := readSide(f)
		if err != nil {
			return nil, err
		}
		if s.setting == baseline {
			res.base[s.engine] = s
		} else {
			res.flips = append(res.flips, s)
		}
	}
	if len(res.base) == 0 {
		return nil, fmt.Errorf("%s: no baseline results", dir)
	}
	sort.Slice(res.flips, func(i, j int) bool {
		a, b := res.flips[i], res.flips[j]
		return a.engine < b.engine || a.engine == b.engine && a.setting < b.setting
	})
	return res, nil
}

func readSide(path string) (*side, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	file, err := results.Read(f, path)
	if err != nil {
		return nil, err
	}
	s := &side{rows: map[string][]float64{}}
	for i := range file.Results {
		r := &file.Results[i]
		if s.engine == "" {
			s.engine, s.setting, s.flags = r.Label("audit-engine"), r.Label("audit-setting"), r.Label("audit-flags")
		}
		key, ok := rowKey(r.Name, s.engine)
		if !ok {
			return nil, fmt.Errorf("%s: Benchmark%s is not an engine %q result", path, r.Name, s.engine)
		}
		if v, ok := r.Value("ns/op"); ok {
			s.rows[key] = append(s.rows[key], v)
		}
	}
	if s.engine == "" {
		return nil, fmt.Errorf("%s: no results with an audit-engine line", path)
	}
	return s, nil
}

func median(v []float64) float64 {
	return benchmath.AssumeNothing.Summary(benchmath.NewSample(v, &benchmath.DefaultThresholds), 0.95).Center
}

// rank is the 1-based position of engine on row when its median is m and
// every other engine keeps its baseline median: lower time ranks first.
func (res *sides) rank(row, engine string, m float64) (int, int) {
	r, n := 1, 1
	for e, s := range res.base {
		if e == engine {
			continue
		}
		v, ok := s.rows[row]
		if !ok {
			continue
		}
		n++
		if median(v) < m {
			r++
		}
	}
	return r, n
}

// A finding is one setting's effect.
type finding struct {
	side            *side
	rows, movedRows int
	medianChange    float64
	largest         string
	largestChange   float64
	rankChanges     []string
	decidesRank     bool
	missingBaseline []string
}

func (res *sides) findings() []finding {
	var out []finding
	for _, s := range res.flips {
		f := finding{side: s}
		base := res.base[s.engine]
		var changes []float64
		keys := make([]string, 0, len(s.rows))
		for k := range s.rows {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			var bv []float64
			if base != nil {
				bv = base.rows[k]
			}
			if len(bv) == 0 {
				f.missingBaseline = append(f.missingBaseline, shortRow(k))
				continue
			}
			b, m := median(bv), median(s.rows[k])
			ratio := m / b
			c := ratio - 1
			changes = append(changes, c)
			f.rows++
			sep := separated(bv, s.rows[k])
			if math.Abs(c) >= moved && sep {
				f.movedRows++
			}
			if sep && math.Abs(c) > math.Abs(f.largestChange) {
				f.largestChange, f.largest = c, shortRow(k)
			}
			rb, n := res.rank(k, s.engine, b)
			rf, _ := res.rank(k, s.engine, m)
			if rb != rf && sep {
				f.rankChanges = append(f.rankChanges, fmt.Sprintf("%s %d→%d of %d", shortRow(k), rb, rf, n))
				if ratio > decides || ratio < 1/decides {
					f.decidesRank = true
				}
			}
		}
		if len(changes) > 0 {
			f.medianChange = median(changes)
		}
		out = append(out, f)
	}
	return out
}

func pct(c float64) string { return fmt.Sprintf("%+.0f %%", 100*c) }

// markdown is the audit's table; a setting without a baseline for some
// rows is noted on warn.
func (res *sides) markdown(warn io.Writer) string {
	var b strings.Builder
	m := res.meta
	fmt.Fprintf(&b, "Measured %s, %s CPUs, %s interleaved rounds (%s), load %s at the start, %s at the end. Change: the median time per op with the setting over the baseline's, per row; a row counts (moved, largest, rank) only when the two sides' rounds do not overlap. Rank: the engine's place among the engines on that row, 1 fastest.\n\n",
		orDash(m["date"]), orDash(m["cpus"]), orDash(m["rounds"]), orDash(m["duration"]), orDash(m["load-start"]), orDash(m["load-end"]))
	b.WriteString("| engine | setting (flags) | rows moved ≥10 % | median change | largest separated change | rank changes | decides a rank |\n")
	b.WriteString("|---|---|---|---|---|---|---|\n")
	for _, f := range res.findings() {
		s := f.side
		ranks := "none"
		if len(f.rankChanges) > 0 {
			ranks = strings.Join(f.rankChanges, "; ")
		}
		dec := "no"
		if f.decidesRank {
			dec = "**yes**"
		}
		largest := "—"
		if f.largest != "" {
			largest = f.largest + " " + pct(f.largestChange)
		}
		fmt.Fprintf(&b, "| %s | %s (`%s`) | %d of %d | %s | %s | %s | %s |\n",
			s.engine, s.setting, s.flags, f.movedRows, f.rows, pct(f.medianChange), largest, ranks, dec)
		if len(f.missingBaseline) > 0 {
			fmt.Fprintf(warn, "kvb audit: %s %s: no baseline for %s\n", s.engine, s.setting, strings.Join(f.missingBaseline, ", "))
		}
	}
	return b.String()
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

const (
	docBegin = "<!-- audit:begin -->"
	docEnd   = "<!-- audit:end -->"
)

// rewriteDoc replaces the text between the audit markers of path.
func rewriteDoc(path, table string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	s := string(b)
	i, j := strings.Index(s, docBegin), strings.Index(s, docEnd)
	if i < 0 || j < i {
		return errors.New(path + ": no " + docBegin + " ... " + docEnd + " lines")
	}
	s = s[:i+len(docBegin)] + "\n" + table + s[j:]
	return os.WriteFile(path, []byte(s), 0o644)
}
